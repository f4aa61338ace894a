import CMicroHTTPDShim

/// What libmicrohttpd's per-request context pointer (the access handler's `req_cls`) stands
/// for, at each point of a request's life. The pointer is one machine word that libmicrohttpd
/// keeps for the request and hands to every callback; it holds one of these, encoded so that
/// nearly every request allocates nothing to carry it (`RequestContextSlot` reads and writes it).
enum RequestContext {
    /// NULL: the request's first call is yet to come.
    case unseen
    /// The path holds `%00`: set by the shim's URI log callback, before the first call.
    case encodedNul
    /// The first call came, and nothing so far needed a `RequestState`: a request without a
    /// body or a delay never allocates one.
    case seen
    /// Answered at once, with a plan's completion tag (`ResponsePlan.Bookkeeping.completionTag`)
    /// to tell when the server is done: kept in the pointer itself, its top bit set (never set in
    /// a user-space address on the 64-bit platforms Mishap runs on), so that no `RequestState`
    /// is made to carry one number to `handleCompleted`. Set only as the request is answered:
    /// no later call of the request reads it as a state.
    case answered(tag: UInt64)
    /// What the request collects between calls, retained by the pointer from the first call that
    /// needs it until `handleCompleted` releases it.
    case state(RequestState)

    /// The marker of `seen`: an address of its own that nothing else has.
    nonisolated(unsafe) fileprivate static let seenMarker = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
    /// The marker of `encodedNul`, the shim's.
    nonisolated(unsafe) fileprivate static let encodedNulMarker = mishap_encoded_nul_marker()!
    /// The bit that marks a tag.
    fileprivate static let tagBit: UInt = 1 << (UInt.bitWidth - 1)

    /// What `pointer` stands for; a state is not retained again.
    fileprivate init(_ pointer: UnsafeMutableRawPointer?) {
        guard let pointer else {
            self = .unseen
            return
        }
        if pointer == Self.seenMarker {
            self = .seen
        } else if pointer == Self.encodedNulMarker {
            self = .encodedNul
        } else if UInt(bitPattern: pointer) & Self.tagBit != 0 {
            self = .answered(tag: UInt64(UInt(bitPattern: pointer) & ~Self.tagBit))
        } else {
            self = .state(Unmanaged<RequestState>.fromOpaque(pointer).takeUnretainedValue())
        }
    }
}

/// libmicrohttpd's per-request context pointer, read and written as a `RequestContext`: the one
/// place that knows how each is encoded and who holds the `RequestState`'s retain.
struct RequestContextSlot {
    let pointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    init(_ pointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        self.pointer = pointer
    }

    /// What the pointer stands for now.
    var context: RequestContext { RequestContext(pointer.pointee) }

    /// Marks the request seen, at its first call: nothing allocated.
    func markSeen() {
        pointer.pointee = RequestContext.seenMarker
    }

    /// The request's state, made (and retained by the pointer) on first need.
    func state() -> RequestState {
        switch context {
        case .state(let state): return state
        case .answered: assertionFailure("a request's state asked for after it was answered")
        case .unseen, .encodedNul, .seen: break
        }
        let state = RequestState()
        pointer.pointee = Unmanaged.passRetained(state).toOpaque()
        return state
    }

    /// The request is answered with a plan whose completion tag is `tag` (not 0, below 2^63, as
    /// journal ids are): kept in the pointer when there is no state, else in the state.
    func answered(tag: UInt64) {
        if case .state(let state) = context {
            state.completionTag = tag
        } else {
            pointer.pointee = UnsafeMutableRawPointer(bitPattern: UInt(truncatingIfNeeded: tag) | RequestContext.tagBit)!
        }
    }

    /// Empties the pointer, at the request's end, and hands over what it held: a state with the
    /// pointer's retain given up, so the state goes when the caller is done with it.
    func take() -> RequestContext {
        let taken = context
        if let stored = pointer.pointee, case .state = taken {
            Unmanaged<RequestState>.fromOpaque(stored).release()
        }
        pointer.pointee = nil
        return taken
    }
}
