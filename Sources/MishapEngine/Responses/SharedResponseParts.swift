/// What many responses of one rule set have in common, kept once: a file of 100,000 rules
/// repeats a few header lists (`Content-Type: application/json; charset=utf-8` above all), a
/// few bodies (`{"ok":true}`) and whole responses, and each rule holding copies of them would
/// cost hundreds of bytes. The compiler of a file passes one of these to every
/// `ResponseTemplate` it makes; the templates then share the storage of equal parts.
///
/// Only parts without placeholders are shared (they are the same for every request). Not for
/// use from two threads at once: one compiler uses it, then drops it.
public final class SharedResponseParts: @unchecked Sendable {
    /// The response fields a prepared response is made of.
    private struct PreparedFields: Equatable {
        var status: Int
        var headers: [Field]
        var body: [UInt8]
    }

    /// Parts filed under their hash, computed once when a part comes: the first part of each
    /// hash in one table, any other of the same hash (rare) in a second. A body or field list
    /// as a plain key was hashed byte by byte at every lookup and again each time its table
    /// grew (a tenth of loading the default scenarios). And `Int` keys cost no protocol
    /// conformance lookup: a table keyed by a type of its own made the Swift runtime scan every
    /// conformance record of the binary when its storage was first made (is that key
    /// `Hashable`, is `[Field]` `Equatable`...), about 0.9 million instructions of loading the
    /// default scenarios for these four tables. (A list of parts for every hash cost 100,000
    /// rules 2 MiB and a tenth of a second more.) Internal, not private, for its tests.
    struct HashedTable<Part> {
        private var first: [Int: Part] = [:]
        private var more: [Int: [Part]] = [:]

        /// The part filed under `hash` that `matches`, if any.
        func find(_ hash: Int, _ matches: (Part) -> Bool) -> Part? {
            guard let part = first[hash] else { return nil }
            if matches(part) { return part }
            return more[hash]?.first(where: matches)
        }

        mutating func add(_ part: Part, hash: Int) {
            if first[hash] == nil { first[hash] = part } else { more[hash, default: []].append(part) }
        }
    }

    private var fieldLists = HashedTable<[Field]>()
    private var headerLists = HashedTable<(fields: [Field], headers: [(name: String, value: Template)])>()
    private var bodies = HashedTable<(bytes: [UInt8], body: Template)>()
    private var preparedResponses = HashedTable<(fields: PreparedFields, response: PreparedResponse)>()

    public init() {}

    private static func hash(of fields: [Field]) -> Int {
        var hasher = Hasher()
        fields.hash(into: &hasher)
        return hasher.finalize()
    }

    private static func hash(of bytes: [UInt8]) -> Int {
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    /// `fields` as stored the first time an equal list came.
    func fields(_ fields: [Field]) -> [Field] {
        let hash = Self.hash(of: fields)
        if let known = fieldLists.find(hash, { $0 == fields }) { return known }
        fieldLists.add(fields, hash: hash)
        return fields
    }

    /// The header templates of a response whose headers render as `fields` (no placeholders),
    /// as stored the first time.
    func headers(_ headers: [(name: String, value: Template)], renderedAs fields: [Field]) -> [(name: String, value: Template)] {
        let hash = Self.hash(of: fields)
        if let known = headerLists.find(hash, { $0.fields == fields }) { return known.headers }
        headerLists.add((fields, headers), hash: hash)
        return headers
    }

    /// A body without placeholders, as stored the first time an equal one came.
    func body(_ body: Template, bytes: [UInt8]) -> Template {
        let hash = Self.hash(of: bytes)
        if let known = bodies.find(hash, { $0.bytes == bytes }) { return known.body }
        bodies.add((bytes, body), hash: hash)
        return body
    }

    /// The prepared response of these fields, made the first time they came.
    func prepared(status: Int, headers: [Field], body: [UInt8]) -> PreparedResponse {
        var hasher = Hasher()
        hasher.combine(status)
        hasher.combine(Self.hash(of: headers))
        hasher.combine(Self.hash(of: body))
        let hash = hasher.finalize()
        let fields = PreparedFields(status: status, headers: headers, body: body)
        if let known = preparedResponses.find(hash, { $0.fields == fields }) { return known.response }
        let made = PreparedResponse(plan: ResponsePlan(status: status, headers: headers, body: body))
        preparedResponses.add((fields, made), hash: hash)
        return made
    }
}
