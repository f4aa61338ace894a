/// A response as declared in a scenario, ready to be filled in for one request.
public struct ResponseTemplate: Sendable {
    public var status: Int
    public var headers: [(name: String, value: Template)]
    public var body: Template

    public init(status: Int, headers: [(name: String, value: Template)] = [], body: Template) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    func plan(context: inout MatchContext) -> ResponsePlan {
        var fields: [Field] = []
        fields.reserveCapacity(headers.count)
        for header in headers {
            fields.append(Field(header.name, String(decoding: header.value.render(context: &context), as: UTF8.self)))
        }
        return ResponsePlan(status: status, headers: fields, body: body.render(context: &context))
    }
}
