import MishapSupport

/// A JUnit XML report for CI: one `<testsuite>` of test cases, each passed, failed (with a
/// message and text) or skipped (with a message). `mishap verdict` writes a case per check,
/// `mishap sweep` one per rule.
struct JUnitReport {
    /// One test case.
    struct TestCase {
        enum Outcome {
            case passed
            /// The message (one line, in the `message` attribute) and the details (the element's text).
            case failed(message: String, details: String)
            case skipped(message: String)
        }

        var name: String
        var className: String
        var outcome: Outcome
        /// Seconds it took, when known.
        var seconds: Double?
        /// Text for `<system-out>` (what a person reads beside the outcome), when any.
        var output: String?
    }

    var suiteName: String
    var cases: [TestCase]

    var failures: Int { cases.filter { if case .failed = $0.outcome { true } else { false } }.count }
    var skipped: Int { cases.filter { if case .skipped = $0.outcome { true } else { false } }.count }

    /// The document.
    var xml: String {
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let total = cases.compactMap(\.seconds).reduce(0, +)
        let head = "<testsuites name=\(Self.attribute(suiteName)) tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\""
        out += head + (cases.contains { $0.seconds != nil } ? " time=\"\(Self.seconds(total))\"" : "") + ">\n"
        out += "  <testsuite name=\(Self.attribute(suiteName)) tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\""
        out += (cases.contains { $0.seconds != nil } ? " time=\"\(Self.seconds(total))\"" : "") + ">\n"
        for testCase in cases {
            out += "    <testcase name=\(Self.attribute(testCase.name)) classname=\(Self.attribute(testCase.className))"
            if let seconds = testCase.seconds { out += " time=\"\(Self.seconds(seconds))\"" }
            var inner = ""
            switch testCase.outcome {
            case .passed: break
            case .failed(let message, let details):
                inner += "      <failure message=\(Self.attribute(message)) type=\"failure\">\(Self.text(details))</failure>\n"
            case .skipped(let message):
                inner += "      <skipped message=\(Self.attribute(message))/>\n"
            }
            if let output = testCase.output, !output.isEmpty {
                inner += "      <system-out>\(Self.text(output))</system-out>\n"
            }
            out += inner.isEmpty ? "/>\n" : ">\n" + inner + "    </testcase>\n"
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    /// Writes the document to `path`; why not, when it could not.
    func write(to path: String) -> String? {
        FileSystem.replaceContents(of: path, with: xml) ? nil : "cannot write \(path): \(Platform.describeLastError())"
    }

    /// Seconds with three decimals, as JUnit readers expect them.
    static func seconds(_ value: Double) -> String {
        let milliseconds = Int((max(0, value) * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// `value` quoted as an attribute: markup characters escaped, line breaks and tabs as
    /// character references (a parser would make them spaces otherwise), and the characters
    /// XML 1.0 does not allow replaced by U+FFFD.
    static func attribute(_ value: String) -> String {
        "\"" + escaped(value, inAttribute: true) + "\""
    }

    /// `value` as element text.
    static func text(_ value: String) -> String {
        escaped(value, inAttribute: false)
    }

    private static func escaped(_ value: String, inAttribute: Bool) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += inAttribute ? "&quot;" : "\""
            case "'": out += inAttribute ? "&apos;" : "'"
            case "\n": out += inAttribute ? "&#10;" : "\n"
            case "\r": out += "&#13;"
            case "\t": out += inAttribute ? "&#9;" : "\t"
            default:
                let value = scalar.value
                let allowed = value >= 0x20 && value != 0xFFFE && value != 0xFFFF
                out.unicodeScalars.append(allowed ? scalar : "\u{FFFD}")
            }
        }
        return out
    }
}
