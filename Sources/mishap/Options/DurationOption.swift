import ArgumentParser
import MishapEngine

/// A duration flag's value: seconds when it is a bare number (`30`, `0.5`), as every duration
/// on the command line and in the admin API reads, or with its unit (`500ms`, `30s`, `2m`, `1h`);
/// at most a day. Scenario files read a bare number as milliseconds instead. Any text parses;
/// `check` refuses, in the command's `validate`, what is not such a duration or out of range,
/// naming the flag.
struct DurationOption: ExpressibleByArgument, CustomStringConvertible {
    /// As given.
    let text: String
    /// Its milliseconds, or why it is not a duration.
    let parsed: Result<Int, DurationText.Problem>

    /// The words each duration flag's help ends with.
    static let rule = "Seconds, or with a unit: 500ms, 30s, 2m."

    /// Whole seconds (a default).
    init(seconds: Int) {
        self.init(argument: "\(seconds)")
    }

    init(argument: String) {
        text = argument
        parsed = DurationText.milliseconds(argument, bare: .seconds)
    }

    /// Its milliseconds; 0 for text `check` refuses.
    var milliseconds: Int { (try? parsed.get()) ?? 0 }

    /// The duration in seconds.
    var seconds: Double { Double(milliseconds) / 1000 }

    /// The duration as a `Duration`.
    var duration: Duration { .milliseconds(milliseconds) }

    /// As given: `start` hands it to the server it runs as it is.
    var description: String { text }

    var defaultValueDescription: String { text }

    /// Refuses, naming `flag`, text that is not a duration, one under `lowest` milliseconds or
    /// over a day, or, with `wholeSeconds`, one that is not a whole number of seconds.
    func check(_ flag: String, lowest: Int = 0, wholeSeconds: Bool = false) throws {
        let lower = lowest % 1000 == 0 ? "\(lowest / 1000)" : "\(Double(lowest) / 1000)"
        let range = "\(flag) must be from \(lower) to 86400 seconds\(wholeSeconds ? ", whole" : "")"
        guard case .success(let milliseconds) = parsed, milliseconds >= lowest, !wholeSeconds || milliseconds % 1000 == 0 else {
            let examples = wholeSeconds ? "30, or with a unit: 30s, 2m" : "a number of seconds, or with a unit: 500ms, 30s, 2m"
            throw ValidationError("\(range) (\(examples)); not '\(text)'")
        }
    }
}
