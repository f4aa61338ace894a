import CMicroHTTPDShim
@testable import MishapHTTP
import Testing

/// The per-request context pointer's states, as the callbacks move a request through them:
/// each reads back as written, a tag never reads as a state, and the state's retain is held by
/// the pointer from its making to `take()`, no longer.
@Suite struct RequestContextTests {
    /// A context pointer as libmicrohttpd keeps one, NULL at first.
    final class Pointer {
        let storage = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
        init() { storage.initialize(to: nil) }
        deinit { storage.deallocate() }
        var slot: RequestContextSlot { RequestContextSlot(storage) }
    }

    @Test func aRequestWithoutStateIsSeenThenAnsweredWithItsTag() {
        let pointer = Pointer()
        guard case .unseen = pointer.slot.context else { Issue.record("NULL reads as \(pointer.slot.context)"); return }
        pointer.slot.markSeen()
        guard case .seen = pointer.slot.context else { Issue.record("marked seen, reads as \(pointer.slot.context)"); return }
        let tag: UInt64 = (1 << 63) - 1
        pointer.slot.answered(tag: tag)
        guard case .answered(let read) = pointer.slot.context else { Issue.record("reads as \(pointer.slot.context)"); return }
        #expect(read == tag)
        guard case .answered(let taken) = pointer.slot.take() else { Issue.record("took something else"); return }
        #expect(taken == tag && pointer.storage.pointee == nil)
    }

    @Test func theStateIsMadeOnceAndHeldByThePointerUntilTaken() {
        let pointer = Pointer()
        pointer.slot.markSeen()
        weak var made: RequestState?
        do {
            let state = pointer.slot.state()
            made = state
            #expect(pointer.slot.state() === state, "asked again, the same state")
            pointer.slot.answered(tag: 7)
            #expect(state.completionTag == 7, "a tag goes into the state when there is one")
        }
        #expect(made != nil, "the pointer holds the state")
        do {
            guard case .state(let taken) = pointer.slot.take() else { Issue.record("took something else"); return }
            #expect(taken === made)
        }
        #expect(made == nil, "released once taken")
        #expect(pointer.storage.pointee == nil)
    }

    @Test func theShimsMarkerReadsAsAnEncodedNul() {
        let pointer = Pointer()
        pointer.storage.pointee = mishap_encoded_nul_marker()
        guard case .encodedNul = pointer.slot.context else { Issue.record("reads as \(pointer.slot.context)"); return }
        _ = pointer.slot.state()
        guard case .state = pointer.slot.context else { Issue.record("a first call's state replaces the marker"); return }
        _ = pointer.slot.take()
    }
}
