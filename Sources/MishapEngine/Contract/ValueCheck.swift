import MishapPattern

/// One schema of an API description, compiled once when the description loads into the
/// keywords that check a value (`ValueCheck.Keywords`), so that checking a request walks this
/// tree and never the description. A schema reached through several `$ref`s is one shared check.
public final class ValueCheck: Sendable {
    /// The JSON types a schema allows (`type`, with 3.0's `nullable` and 3.1's `"null"`).
    public struct Types: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let string = Types(rawValue: 1)
        public static let number = Types(rawValue: 2)
        public static let integer = Types(rawValue: 4)
        public static let boolean = Types(rawValue: 8)
        public static let object = Types(rawValue: 16)
        public static let array = Types(rawValue: 32)
        public static let null = Types(rawValue: 64)
    }

    /// A bound of `minimum` or `maximum`, exclusive or not.
    public struct Bound: Sendable {
        public var value: Double
        public var exclusive: Bool
        /// The number as the description wrote it, for messages.
        public var written: String
        public init(value: Double, exclusive: Bool, written: String) {
            self.value = value
            self.exclusive = exclusive
            self.written = written
        }
    }

    /// What `additionalProperties` says of members `properties` does not name.
    public enum Additional: Sendable {
        case allowed
        case forbidden
        case checked(ValueCheck)
    }

    /// Every keyword checked, each nil (or empty) when the schema does not have it.
    public struct Keywords: Sendable {
        /// The JSON types allowed; nil allows any.
        public var types: Types?
        public var enumValues: [JSONValue]?
        /// `const`, as a one-value list (its value may be `null`).
        public var constValue: [JSONValue]?
        public var format: StringFormat?
        public var minLength: Int?
        public var maxLength: Int?
        public var pattern: Pattern?
        public var minimum: Bound?
        public var maximum: Bound?
        /// `multipleOf`: the number divided by it is a whole number.
        public var multipleOf: Double?
        public var uniqueItems = false
        public var minProperties: Int?
        public var maxProperties: Int?
        /// `not`: a value this schema accepts is refused.
        public var refused: ValueCheck?
        public var required: [String] = []
        public var properties: [String: ValueCheck] = [:]
        public var additional: Additional = .allowed
        public var items: ValueCheck?
        public var minItems: Int?
        public var maxItems: Int?
        public var allOf: [ValueCheck] = []
        public var anyOf: [ValueCheck] = []
        public var oneOf: [ValueCheck] = []
        public init() {}
    }

    public let keywords: Keywords

    public init(_ keywords: Keywords) {
        self.keywords = keywords
    }

    /// A check that every value passes (`{}`, `true`).
    public static let anything = ValueCheck(Keywords())

    /// Checks `value`, found at `place` (`/pets/0/name`, `query id`), adding each problem found.
    public func check(_ value: JSONValue, at place: String, into problems: inout ContractProblems) {
        guard !problems.isFull else { return }
        let keywords = self.keywords
        if let types = keywords.types, !Self.value(value, hasOneOf: types) {
            problems.add(place, "expected \(Self.describe(types, format: keywords.format)), got \(value.shownForProblem)")
            return
        }
        if let values = keywords.enumValues, !values.contains(where: { $0.isSameJSON(as: value) }) {
            let listed = values.prefix(10).map(\.shownForProblem).joined(separator: ", ")
            problems.add(place, "expected one of \(listed)\(values.count > 10 ? ", …" : ""), got \(value.shownForProblem)")
        }
        if let constant = keywords.constValue?.first, !constant.isSameJSON(as: value) {
            problems.add(place, "expected \(constant.shownForProblem), got \(value.shownForProblem)")
        }
        switch value {
        case .string(let text): checkString(text, at: place, into: &problems)
        case .number(let text): checkNumber(text, at: place, into: &problems)
        case .object(let members): checkObject(members, at: place, into: &problems)
        case .array(let items): checkArray(items, at: place, into: &problems)
        case .bool, .null: break
        }
        for part in keywords.allOf { part.check(value, at: place, into: &problems) }
        if let refused = keywords.refused {
            var own = ContractProblems(limit: 1)
            refused.check(value, at: place, into: &own)
            if own.list.isEmpty { problems.add(place, "matches the schema of not, got \(value.shownForProblem)") }
        }
        if !keywords.anyOf.isEmpty { checkAlternatives(keywords.anyOf, exactlyOne: false, value, at: place, into: &problems) }
        if !keywords.oneOf.isEmpty { checkAlternatives(keywords.oneOf, exactlyOne: true, value, at: place, into: &problems) }
    }

    /// `anyOf` (at least one schema passes) or `oneOf` (exactly one does).
    private func checkAlternatives(_ schemas: [ValueCheck], exactlyOne: Bool, _ value: JSONValue, at place: String,
                                   into problems: inout ContractProblems) {
        var passing = 0
        var firstProblem: String?
        for schema in schemas {
            var own = ContractProblems(limit: 1)
            schema.check(value, at: place, into: &own)
            if own.list.isEmpty { passing += 1 } else if firstProblem == nil { firstProblem = own.list[0] }
        }
        let keyword = exactlyOne ? "oneOf" : "anyOf"
        if passing == 0 {
            problems.add(place, "matches none of the \(schemas.count) schemas of \(keyword) (the first says: \(firstProblem ?? "?"))")
        } else if exactlyOne && passing > 1 {
            problems.add(place, "matches \(passing) of the \(schemas.count) schemas of oneOf; exactly one must match")
        }
    }

    private func checkString(_ text: String, at place: String, into problems: inout ContractProblems) {
        let keywords = self.keywords
        if keywords.minLength != nil || keywords.maxLength != nil {
            let length = text.unicodeScalars.count
            if let minimum = keywords.minLength, length < minimum {
                problems.add(place, "expected at least \(minimum) character(s), got \(length)")
            }
            if let maximum = keywords.maxLength, length > maximum {
                problems.add(place, "expected at most \(maximum) character(s), got \(length)")
            }
        }
        if let pattern = keywords.pattern, !pattern.matches(text) {
            problems.add(place, "expected a string matching \(pattern.source), got \(JSONValue.string(text).shownForProblem)")
        }
        if let format = keywords.format, format.isString, !format.accepts(text) {
            problems.add(place, "expected a string in format \(format.rawValue), got \(JSONValue.string(text).shownForProblem)")
        }
    }

    private func checkNumber(_ text: String, at place: String, into problems: inout ContractProblems) {
        let keywords = self.keywords
        guard let number = Double(text) else { return }
        if let minimum = keywords.minimum, minimum.exclusive ? !(number > minimum.value) : !(number >= minimum.value) {
            problems.add(place, "expected a number \(minimum.exclusive ? ">" : ">=") \(minimum.written), got \(text)")
        }
        if let maximum = keywords.maximum, maximum.exclusive ? !(number < maximum.value) : !(number <= maximum.value) {
            problems.add(place, "expected a number \(maximum.exclusive ? "<" : "<=") \(maximum.written), got \(text)")
        }
        if let divisor = keywords.multipleOf {
            let quotient = number / divisor
            if !quotient.isFinite || abs(quotient - quotient.rounded()) > 1e-9 * max(1, abs(quotient)) {
                problems.add(place, "expected a multiple of \(Self.shown(divisor)), got \(text)")
            }
        }
        if let format = keywords.format, !format.isString, !format.accepts(text) {
            problems.add(place, "expected a number in format \(format.rawValue), got \(text)")
        }
    }

    private func checkObject(_ members: [(String, JSONValue)], at place: String, into problems: inout ContractProblems) {
        let keywords = self.keywords
        if let minimum = keywords.minProperties, members.count < minimum {
            problems.add(place, "expected at least \(minimum) member(s), got \(members.count)")
        }
        if let maximum = keywords.maxProperties, members.count > maximum {
            problems.add(place, "expected at most \(maximum) member(s), got \(members.count)")
        }
        for name in keywords.required where !members.contains(where: { $0.0 == name }) {
            problems.add(Self.place(place, name), "required")
        }
        for (name, member) in members {
            if let property = keywords.properties[name] {
                property.check(member, at: Self.place(place, name), into: &problems)
                continue
            }
            switch keywords.additional {
            case .allowed: break
            case .forbidden: problems.add(Self.place(place, name), "not allowed (additionalProperties is false)")
            case .checked(let check): check.check(member, at: Self.place(place, name), into: &problems)
            }
        }
    }

    private func checkArray(_ items: [JSONValue], at place: String, into problems: inout ContractProblems) {
        let keywords = self.keywords
        if let minimum = keywords.minItems, items.count < minimum {
            problems.add(place, "expected at least \(minimum) item(s), got \(items.count)")
        }
        if let maximum = keywords.maxItems, items.count > maximum {
            problems.add(place, "expected at most \(maximum) item(s), got \(items.count)")
        }
        if keywords.uniqueItems, items.count > 1 {
            outer: for second in 1..<items.count {
                for first in 0..<second where items[first].isSameJSON(as: items[second]) {
                    problems.add(Self.place(place, String(second)), "a duplicate of item \(first) (uniqueItems is true)")
                    break outer
                }
            }
        }
        if let check = keywords.items {
            for (index, item) in items.enumerated() {
                check.check(item, at: Self.place(place, String(index)), into: &problems)
                if problems.isFull { return }
            }
        }
    }

    /// The place of member `name` under `place`, as a JSON pointer writes it (`~0` and `~1`
    /// for `~` and `/`); the body itself is `body`, and its members start at `/`.
    static func place(_ place: String, _ name: String) -> String {
        let escaped = name.replacing("~", with: "~0").replacing("/", with: "~1")
        return (place == ContractProblems.bodyPlace ? "" : place) + "/" + escaped
    }

    /// Whether `value` is of one of `types` (an integer is a number with no fraction: `2.0` is one).
    static func value(_ value: JSONValue, hasOneOf types: Types) -> Bool {
        switch value {
        case .string: return types.contains(.string)
        case .bool: return types.contains(.boolean)
        case .null: return types.contains(.null)
        case .object: return types.contains(.object)
        case .array: return types.contains(.array)
        case .number(let text):
            if types.contains(.number) { return true }
            guard types.contains(.integer), let number = Double(text) else { return false }
            return number.isFinite && number.rounded(.towardZero) == number
        }
    }

    /// A number as a problem shows it: `2`, not `2.0`.
    static func shown(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    /// `a string`, `an integer or null`, `a string in format email`.
    static func describe(_ types: Types, format: StringFormat?) -> String {
        let names: [(Types, String)] = [(.string, "a string"), (.integer, "an integer"), (.number, "a number"), (.boolean, "a boolean"),
                                         (.object, "an object"), (.array, "an array"), (.null, "null")]
        var text = names.filter { types.contains($0.0) && !($0.0 == .integer && types.contains(.number)) }
            .map(\.1).joined(separator: " or ")
        if let format, types.contains(format.isString ? .string : .number) { text += " in format \(format.rawValue)" }
        return text
    }
}
