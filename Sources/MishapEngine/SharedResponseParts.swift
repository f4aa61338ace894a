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
    private struct PreparedKey: Hashable {
        var status: Int
        var headers: [Field]
        var body: [UInt8]
    }

    private var fieldLists: [[Field]: [Field]] = [:]
    private var headerLists: [[Field]: [(name: String, value: Template)]] = [:]
    private var bodies: [[UInt8]: Template] = [:]
    private var preparedResponses: [PreparedKey: PreparedResponse] = [:]

    public init() {}

    /// `fields` as stored the first time an equal list came.
    func fields(_ fields: [Field]) -> [Field] {
        if let known = fieldLists[fields] { return known }
        fieldLists[fields] = fields
        return fields
    }

    /// The header templates of a response whose headers render as `fields` (no placeholders),
    /// as stored the first time.
    func headers(_ headers: [(name: String, value: Template)], renderedAs fields: [Field]) -> [(name: String, value: Template)] {
        if let known = headerLists[fields] { return known }
        headerLists[fields] = headers
        return headers
    }

    /// A body without placeholders, as stored the first time an equal one came.
    func body(_ body: Template, bytes: [UInt8]) -> Template {
        if let known = bodies[bytes] { return known }
        bodies[bytes] = body
        return body
    }

    /// The prepared response of these fields, made the first time they came.
    func prepared(status: Int, headers: [Field], body: [UInt8]) -> PreparedResponse {
        let key = PreparedKey(status: status, headers: headers, body: body)
        if let known = preparedResponses[key] { return known }
        let made = PreparedResponse(plan: ResponsePlan(status: status, headers: headers, body: body))
        preparedResponses[key] = made
        return made
    }
}
