import Testing
@testable import MishapEngine

/// `RangeSupport`: reading `Range` headers, and turning a whole-body plan into the 206, 416 or
/// 200 answer, with its headers, fault, cut and journal outcome.
@Suite struct RangeSupportTests {
    static let body = Array(0..<100).map { UInt8($0) }

    @Test(arguments: [
        ("bytes=0-9", RangeRequest.Answer.part(0..<10)),
        ("bytes=90-", .part(90..<100)),
        ("bytes=-10", .part(90..<100)),
        ("bytes=-500", .part(0..<100)),
        ("bytes=95-200", .part(95..<100)),
        ("bytes=99-99", .part(99..<100)),
        ("  BYTES=10-19 ", .part(10..<20)),
        ("bytes= 10-19", .part(10..<20)),
        ("bytes=10-19,", .part(10..<20)),
        ("bytes=100-", .unsatisfiable),
        ("bytes=100-200", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
        ("bytes=99999999999999999999999-", .unsatisfiable),
        ("bytes=0-99999999999999999999999", .part(0..<100)),
        ("bytes=0-9,20-29", .whole),
        ("bytes=9-0", .whole),
        ("bytes=a-b", .whole),
        ("bytes=-", .whole),
        ("bytes=5", .whole),
        ("items=0-9", .whole),
        ("bytes=", .whole),
        ("", .whole),
    ])
    func rangeHeaders(header: String, expected: RangeRequest.Answer) {
        #expect(RangeRequest.answer(to: header, total: 100) == expected, "\(header)")
    }

    @Test func anEmptyBodyHasNoByteToGive() {
        #expect(RangeRequest.answer(to: "bytes=0-", total: 0) == .unsatisfiable)
        #expect(RangeRequest.answer(to: "bytes=-5", total: 0) == .unsatisfiable)
    }

    static func plan(_ support: RangeSupport, _ headers: [Field] = [], method: String = "GET") -> ResponsePlan {
        var plan = ResponsePlan(status: 200, headers: [Field("Content-Type", "application/octet-stream")], body: body)
        support.resolved(staticBody: body).apply(to: &plan, request: Request(method: method, path: "/f", headers: headers))
        return plan
    }

    static func header(_ plan: ResponsePlan, _ name: String) -> String? {
        plan.headers.last { $0.name == name }?.value
    }

    @Test func aPartIs206WithItsContentRange() throws {
        let plan = Self.plan(RangeSupport(), [Field("range", "bytes=10-19")])
        #expect(plan.status == 206)
        #expect(plan.body == Array(Self.body[10..<20]))
        #expect(Self.header(plan, "Content-Range") == "bytes 10-19/100")
        #expect(Self.header(plan, "Accept-Ranges") == "bytes")
        #expect(Self.header(plan, "ETag") == RangeSupport.strongETag(of: Self.body))
        #expect(plan.cutAfterBytes == nil)
        let outcome = try #require(plan.bookkeeping.range)
        #expect(outcome.asked == "bytes=10-19" && outcome.status == 206 && outcome.contentRange == "bytes 10-19/100")
    }

    @Test func withoutRangeTheWholeBodyCarriesTheHeaders() {
        let plan = Self.plan(RangeSupport())
        #expect(plan.status == 200 && plan.body == Self.body)
        #expect(Self.header(plan, "Accept-Ranges") == "bytes" && Self.header(plan, "ETag") != nil)
        #expect(Self.header(plan, "Content-Range") == nil)
        #expect(plan.bookkeeping.range?.asked == nil && plan.bookkeeping.range?.status == 200)
    }

    @Test func unsatisfiableIs416WithTheTotal() {
        let plan = Self.plan(RangeSupport(), [Field("Range", "bytes=100-")])
        #expect(plan.status == 416 && plan.body.isEmpty)
        #expect(Self.header(plan, "Content-Range") == "bytes */100")
    }

    @Test func ifRangeMatchingGivesThePartAndOtherwiseTheWhole() {
        let tag = RangeSupport.strongETag(of: Self.body)
        let matching = Self.plan(RangeSupport(), [Field("Range", "bytes=50-"), Field("If-Range", tag)])
        #expect(matching.status == 206 && matching.body.count == 50)
        let other = Self.plan(RangeSupport(), [Field("Range", "bytes=50-"), Field("If-Range", "\"old\"")])
        #expect(other.status == 200 && other.body == Self.body)
        #expect(other.bookkeeping.range?.ifRange == "\"old\"")
        let weak = Self.plan(RangeSupport(), [Field("Range", "bytes=50-"), Field("If-Range", "W/" + tag)])
        #expect(weak.status == 200)
        let date = Self.plan(RangeSupport(), [Field("Range", "bytes=50-"), Field("If-Range", "Fri, 27 Nov 2026 21:00:00 GMT")])
        #expect(date.status == 200)
    }

    @Test func aDeclaredETagIsSentAndCompared() {
        let support = RangeSupport(etag: "\"v1\"")
        let plan = Self.plan(support, [Field("Range", "bytes=0-0"), Field("If-Range", "\"v1\"")])
        #expect(plan.status == 206 && Self.header(plan, "ETag") == "\"v1\"")
        let weak = Self.plan(RangeSupport(etag: "W/\"v1\""), [Field("Range", "bytes=0-0"), Field("If-Range", "W/\"v1\"")])
        #expect(weak.status == 200, "a weak tag never matches If-Range")
    }

    @Test func onlyGETIsAnsweredInPartAndHEADHasNoCut() {
        let post = Self.plan(RangeSupport(), [Field("Range", "bytes=0-9")], method: "POST")
        #expect(post.status == 200 && post.body.count == 100)
        let head = Self.plan(RangeSupport(cut: RangeCut(mark: .bytes(10), closes: false)), [Field("Range", "bytes=0-9")], method: "HEAD")
        #expect(head.status == 200 && head.cutAfterBytes == nil && Self.header(head, "ETag") != nil)
    }

    @Test func theFaultsBreakResuming() {
        let range = [Field("Range", "bytes=10-")]
        let ignored = Self.plan(RangeSupport(fault: .ignoreRange), range)
        #expect(ignored.status == 200 && ignored.body == Self.body && Self.header(ignored, "Accept-Ranges") == "bytes")
        let refused = Self.plan(RangeSupport(fault: .unsatisfiable), range)
        #expect(refused.status == 416 && Self.header(refused, "Content-Range") == "bytes */100")
        let tag = RangeSupport.strongETag(of: Self.body)
        let changed = Self.plan(RangeSupport(fault: .changedETag), range + [Field("If-Range", tag)])
        #expect(changed.status == 200 && changed.body == Self.body)
        #expect(Self.header(changed, "ETag") == RangeSupport.changed(tag))
        #expect(changed.bookkeeping.range?.fault == .changedETag)
        // Without a Range, the faults change nothing but the ETag.
        #expect(Self.plan(RangeSupport(fault: .unsatisfiable)).status == 200)
    }

    @Test func aCutCountsTheBytesOfTheBodySent() {
        let whole = Self.plan(RangeSupport(cut: RangeCut(mark: .bytes(40), closes: false)))
        #expect(whole.status == 200 && whole.cutAfterBytes == 40 && whole.body.count == 100)
        let part = Self.plan(RangeSupport(cut: RangeCut(mark: .fraction(0.5), closes: true)), [Field("Range", "bytes=80-")])
        #expect(part.status == 206 && part.cutAfterBytes == 10)
        #expect(part.bookkeeping.range?.cutCloses == true && part.bookkeeping.range?.cutAfterBytes == 10)
        let past = Self.plan(RangeSupport(cut: RangeCut(mark: .bytes(500), closes: false)))
        #expect(past.cutAfterBytes == nil, "a cut past the body's end sends it whole")
    }

    @Test func entityTagsAndTheirChange() {
        #expect(RangeSupport.isEntityTag("\"v1\"") && RangeSupport.isEntityTag("W/\"v1\"") && RangeSupport.isEntityTag("\"\""))
        for wrong in ["v1", "\"v1", "\"a b\"", "\"a\"b\"", "w/\"v1\"", "\""] {
            #expect(!RangeSupport.isEntityTag(wrong), "\(wrong)")
        }
        #expect(RangeSupport.changed("\"v1\"") == "\"v1-changed\"")
        #expect(RangeSupport.strongETag(of: [1, 2]) != RangeSupport.strongETag(of: [2, 1]))
        #expect(RangeSupport.strongETag(of: []).count == 20)
    }

    /// The headers `ranges` adds count against the response head's limit: headers that fit
    /// alone but not with them answer 500, as headers over the limit do.
    @Test func theHeadersRangesAddsCountAgainstTheLimit() {
        let value = String(repeating: "a", count: ResponseHead.maximumHeaderBytes - 9 - 40)
        let template = ResponseTemplate(status: 200, headers: [("X-Big", Template(literal: value))],
                                        body: Template(segments: [.literal(Self.body)], escaping: .none), ranges: RangeSupport())
        var context = MatchContext(request: Request(method: "GET", path: "/f"))
        let plan = template.plan(context: &context, random: RandomSource(seed: 1))
        #expect(plan.status == 500 && plan.bookkeeping.warning != nil)
    }

    /// A template with `ranges:` is never prepared, its static body's ETag is worked out once,
    /// and its plan carries the part.
    @Test func aTemplateWithRangesAnswersInPart() {
        let template = ResponseTemplate(status: 200, body: Template(segments: [.literal(Self.body)], escaping: .none),
                                        ranges: RangeSupport())
        #expect(template.ranges?.etag == RangeSupport.strongETag(of: Self.body))
        var context = MatchContext(request: Request(method: "GET", path: "/f", headers: [Field("Range", "bytes=-1")]))
        let plan = template.plan(context: &context, random: RandomSource(seed: 1))
        #expect(plan.status == 206 && plan.body == [99] && plan.prepared == nil)
    }
}
