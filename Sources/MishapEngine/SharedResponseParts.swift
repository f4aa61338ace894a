/// What many responses of one rule set have in common, kept once: a file of 100,000 rules
/// repeats a few header lists (`Content-Type: application/json; charset=utf-8` above all), a
/// few bodies (`{"ok":true}`) and whole responses, and each rule holding copies of them would
/// cost hundreds of bytes. The compiler of a file passes one of these to every
/// `ResponseTemplate` it makes; the templates then share the storage of equal parts.
///
/// Only parts without placeholders are shared (they are the same for every request). Not for
/// use from two threads at once: one compiler uses it, then drops it.
public final class SharedResponseParts: @unchecked Sendable {
    /// A table key hashed once, when made. The keys are byte arrays and field lists: as plain
    /// keys, a body was hashed byte by byte at every lookup and again each time its table grew
    /// (a tenth of loading the default scenarios went here).
    private struct Key<Value: Equatable>: Hashable {
        let value: Value
        let hash: Int

        static func == (a: Self, b: Self) -> Bool { a.hash == b.hash && a.value == b.value }
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    /// The response fields a prepared response is made of.
    private struct PreparedFields: Equatable {
        var status: Int
        var headers: [Field]
        var body: [UInt8]
    }

    private var fieldLists: [Key<[Field]>: [Field]] = [:]
    private var headerLists: [Key<[Field]>: [(name: String, value: Template)]] = [:]
    private var bodies: [Key<[UInt8]>: Template] = [:]
    private var preparedResponses: [Key<PreparedFields>: PreparedResponse] = [:]

    public init() {}

    private static func key(_ fields: [Field]) -> Key<[Field]> {
        var hasher = Hasher()
        fields.hash(into: &hasher)
        return Key(value: fields, hash: hasher.finalize())
    }

    private static func hash(of bytes: [UInt8]) -> Int {
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    /// `fields` as stored the first time an equal list came.
    func fields(_ fields: [Field]) -> [Field] {
        let key = Self.key(fields)
        if let known = fieldLists[key] { return known }
        fieldLists[key] = fields
        return fields
    }

    /// The header templates of a response whose headers render as `fields` (no placeholders),
    /// as stored the first time.
    func headers(_ headers: [(name: String, value: Template)], renderedAs fields: [Field]) -> [(name: String, value: Template)] {
        let key = Self.key(fields)
        if let known = headerLists[key] { return known }
        headerLists[key] = headers
        return headers
    }

    /// A body without placeholders, as stored the first time an equal one came.
    func body(_ body: Template, bytes: [UInt8]) -> Template {
        let key = Key(value: bytes, hash: Self.hash(of: bytes))
        if let known = bodies[key] { return known }
        bodies[key] = body
        return body
    }

    /// The prepared response of these fields, made the first time they came.
    func prepared(status: Int, headers: [Field], body: [UInt8]) -> PreparedResponse {
        var hasher = Hasher()
        hasher.combine(status)
        hasher.combine(Self.key(headers).hash)
        hasher.combine(Self.hash(of: body))
        let key = Key(value: PreparedFields(status: status, headers: headers, body: body), hash: hasher.finalize())
        if let known = preparedResponses[key] { return known }
        let made = PreparedResponse(plan: ResponsePlan(status: status, headers: headers, body: body))
        preparedResponses[key] = made
        return made
    }
}
