/// A response as declared in a scenario, ready to be filled in for one request.
public struct ResponseTemplate: Sendable {
    public var status: Int
    public var headers: [(name: String, value: Template)]
    public var body: Template
    public var delay: Delay?
    public var hang: Bool
    public var dribble: Dribble?
    public var fault: Fault?

    public init(
        status: Int, headers: [(name: String, value: Template)] = [], body: Template,
        delay: Delay? = nil, hang: Bool = false, dribble: Dribble? = nil, fault: Fault? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.hang = hang
        self.dribble = dribble
        self.fault = fault
    }

    /// How many random bytes the `garbage` fault sends when the response declares no body.
    static let garbageLength = 64

    func plan(context: inout MatchContext, random: RandomSource) -> ResponsePlan {
        var fields: [Field] = []
        fields.reserveCapacity(headers.count)
        for header in headers {
            fields.append(Field(header.name, String(decoding: header.value.render(context: &context), as: UTF8.self)))
        }
        var bytes = body.render(context: &context)
        if fault == .garbage && bytes.isEmpty {
            bytes = Self.garbage(random)
        }
        return ResponsePlan(
            status: status, headers: fields, body: bytes,
            delayMilliseconds: delay?.milliseconds(random) ?? 0, hang: hang, dribble: dribble, fault: fault)
    }

    /// Random bytes that no HTTP parser accepts as a status line.
    static func garbage(_ random: RandomSource) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(garbageLength)
        while bytes.count < garbageLength {
            withUnsafeBytes(of: random.next()) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - garbageLength)
        // A leading 'H' could begin "HTTP/"; a control byte cannot.
        bytes[0] = 0x00
        return bytes
    }
}
