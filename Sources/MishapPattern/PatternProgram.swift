/// A compiled pattern: a Thompson automaton run as a Pike VM (every live state advanced in step,
/// one character at a time), so a match costs at most the program size times the value length
/// and never backtracks.
struct PatternProgram: Sendable {
    /// The most instructions a pattern may compile to.
    static let instructionLimit = 10_000

    struct Instruction: Sendable {
        enum Operation: UInt8, Sendable {
            /// Consume one character accepted by `matchers[first]`; `ascii` answers for one-byte
            /// ASCII characters.
            case consume
            /// Continue at both `first` and `second`.
            case split
            /// Continue at `first`.
            case jump
            /// Continue at the next instruction if the assertion `first` holds here.
            case assert
            case match
        }

        var operation: Operation
        var first: Int32 = 0
        var second: Int32 = 0
        /// For `consume`: bit `b` of the 128 is set when the ASCII character `b` is accepted.
        var ascii: (low: UInt64, high: UInt64) = (0, 0)
    }

    let instructions: [Instruction]
    let matchers: [CharacterMatcher]
    /// Every match starts at the beginning of the value, so a run can stop once no state is live.
    let isAnchoredAtStart: Bool
    let usesWordBoundaries: Bool

    init(_ tree: PatternNode) throws(PatternError) {
        var compiler = Compiler()
        try compiler.emit(tree)
        try compiler.append(Instruction(operation: .match))
        instructions = compiler.instructions
        matchers = compiler.matchers
        isAnchoredAtStart = Self.isAnchoredAtStart(tree)
        usesWordBoundaries = compiler.usesWordBoundaries
    }

    private static func isAnchoredAtStart(_ node: PatternNode) -> Bool {
        switch node {
        case .assertion(let assertion): return assertion == .startOfSubject
        case .sequence(let nodes): return nodes.first.map(isAnchoredAtStart) ?? false
        case .alternation(let nodes): return nodes.allSatisfy(isAnchoredAtStart)
        case .repetition(let inner, let min, _): return min > 0 && isAnchoredAtStart(inner)
        case .empty, .atom: return false
        }
    }

    private struct Compiler {
        var instructions: [Instruction] = []
        var matchers: [CharacterMatcher] = []
        /// Consuming instructions already built, by the matcher's exact scalars: `K` and the Kelvin
        /// sign are equal characters but distinct pattern literals.
        var compiled: [[UInt32]: Instruction] = [:]
        var usesWordBoundaries = false

        @discardableResult
        mutating func append(_ instruction: Instruction) throws(PatternError) -> Int {
            guard instructions.count < PatternProgram.instructionLimit else {
                throw PatternError("pattern too large: it compiles to more than \(PatternProgram.instructionLimit) instructions; use smaller repetition counts", at: nil)
            }
            instructions.append(instruction)
            return instructions.count - 1
        }

        mutating func emit(_ node: PatternNode) throws(PatternError) {
            switch node {
            case .empty:
                break
            case .atom(let matcher):
                try append(consume(matcher))
            case .assertion(let assertion):
                if assertion == .wordBoundary || assertion == .notWordBoundary { usesWordBoundaries = true }
                try append(Instruction(operation: .assert, first: assertion.rawValue))
            case .sequence(let nodes):
                for node in nodes { try emit(node) }
            case .alternation(let nodes):
                var exits: [Int] = []
                for node in nodes.dropLast() {
                    let split = try append(Instruction(operation: .split))
                    instructions[split].first = Int32(instructions.count)
                    try emit(node)
                    exits.append(try append(Instruction(operation: .jump)))
                    instructions[split].second = Int32(instructions.count)
                }
                try emit(nodes.last!)
                for exit in exits { instructions[exit].first = Int32(instructions.count) }
            case .repetition(let inner, let min, let max):
                guard !Self.isEmpty(inner) else { return }
                for _ in 0..<min { try emit(inner) }
                if let max {
                    // Each optional copy can skip to the end: a?a?a? as a(a(a)?)?)?.
                    var skips: [Int] = []
                    for _ in min..<max {
                        let split = try append(Instruction(operation: .split))
                        instructions[split].first = Int32(instructions.count)
                        skips.append(split)
                        try emit(inner)
                    }
                    for split in skips { instructions[split].second = Int32(instructions.count) }
                } else {
                    let loop = try append(Instruction(operation: .split))
                    instructions[loop].first = Int32(instructions.count)
                    try emit(inner)
                    try append(Instruction(operation: .jump, first: Int32(loop)))
                    instructions[loop].second = Int32(instructions.count)
                }
            }
        }

        private static func isEmpty(_ node: PatternNode) -> Bool {
            switch node {
            case .empty: return true
            case .sequence(let nodes): return nodes.allSatisfy(isEmpty)
            case .repetition(let inner, _, _): return isEmpty(inner)
            case .atom, .assertion, .alternation: return false
            }
        }

        /// A consuming instruction, its ASCII answers computed once per distinct matcher.
        private mutating func consume(_ matcher: CharacterMatcher) -> Instruction {
            let key = matcher.key
            if let instruction = compiled[key] { return instruction }
            var instruction = Instruction(operation: .consume, first: Int32(matchers.count))
            for byte in UInt8(0)..<128 where Self.accepts(matcher, byte) {
                if byte < 64 {
                    instruction.ascii.low |= 1 << UInt64(byte)
                } else {
                    instruction.ascii.high |= 1 << UInt64(byte - 64)
                }
            }
            matchers.append(matcher)
            compiled[key] = instruction
            return instruction
        }

        private static func accepts(_ matcher: CharacterMatcher, _ byte: UInt8) -> Bool {
            // A plain ASCII literal, the usual case, needs no character to be built.
            if case .literal(let character, nil) = matcher, let expected = character.singleASCIIByte {
                return byte == expected
            }
            return matcher.matches(Character(Unicode.Scalar(byte)))
        }
    }
}

// MARK: Matching

extension PatternProgram {
    func matches(_ value: String) -> Bool {
        let count = instructions.count
        // Per state: the generation that last added it; then the stack of states to follow and
        // the list of consuming states reached at the current position.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * count) { buffer in
            let base = buffer.baseAddress!
            base.initialize(repeating: 0, count: count)
            return instructions.withUnsafeBufferPointer { code in
                // An ASCII value is read byte by byte, which is several times faster than by
                // characters; otherwise by characters.
                let ascii = value.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
                    guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
                    var cursor = ASCIICursor(bytes: bytes)
                    return run(value, &cursor, code: code, buffer: base)
                }
                if let result = ascii ?? nil { return result }
                var cursor = CharacterCursor(characters: value.makeIterator())
                return run(value, &cursor, code: code, buffer: base)
            }
        }
    }

    private struct States {
        let marks: UnsafeMutablePointer<Int>
        let stack: UnsafeMutablePointer<Int>
        var count = 0
        var generation = 1

        /// Adds `state` for the current position unless it is already there.
        @inline(__always)
        mutating func add(_ state: Int) {
            if marks[state] != generation {
                marks[state] = generation
                stack[count] = state
                count += 1
            }
        }

        @inline(__always)
        mutating func pop() -> Int {
            count -= 1
            return stack[count]
        }
    }

    private func run<Cursor: PatternCursor>(
        _ value: String, _ cursor: inout Cursor, code: UnsafeBufferPointer<Instruction>,
        buffer: UnsafeMutablePointer<Int>
    ) -> Bool {
        var states = States(marks: buffer, stack: buffer + code.count)
        let consuming = buffer + 2 * code.count
        var isStart = true
        var current = cursor.next()
        var following = current == nil ? nil : cursor.next()
        var previousIsNewline = false
        // Word boundaries, when the pattern has some: the UTF-8 offset of the position, and the
        // first boundary at or after it, found with the standard library's Unicode word breaking
        // (`_wordIndex(after:)`, which Swift's `Regex` uses for `\b` too).
        var offset = 0
        var nextWordBoundary = 0
        var nextWordBoundaryIndex = value.startIndex
        var isWordBoundary = false
        while true {
            if isStart || !isAnchoredAtStart { states.add(0) }
            if usesWordBoundaries {
                while nextWordBoundary < offset {
                    nextWordBoundaryIndex = value._wordIndex(after: nextWordBoundaryIndex)
                    nextWordBoundary = value.utf8.distance(from: value.startIndex, to: nextWordBoundaryIndex)
                }
                isWordBoundary = nextWordBoundary == offset
            }
            // Follow every non-consuming instruction from the live states.
            var consumingCount = 0
            while states.count > 0 {
                let state = states.pop()
                let instruction = code[state]
                switch instruction.operation {
                case .consume:
                    consuming[consumingCount] = state
                    consumingCount += 1
                case .split:
                    states.add(Int(instruction.second))
                    states.add(Int(instruction.first))
                case .jump:
                    states.add(Int(instruction.first))
                case .assert:
                    let holds: Bool
                    switch PatternAssertion(rawValue: instruction.first)! {
                    case .startOfSubject: holds = isStart
                    case .endOfSubject: holds = current == nil
                    case .endOfSubjectBeforeNewline:
                        holds = current.map { following == nil && $0.isNewline } ?? true
                    case .startOfLine: holds = isStart || previousIsNewline
                    case .endOfLine: holds = current?.isNewline ?? true
                    case .wordBoundary: holds = isWordBoundary
                    case .notWordBoundary: holds = !isWordBoundary
                    }
                    if holds { states.add(state + 1) }
                case .match:
                    return true
                }
            }
            guard let unit = current else { return false }
            // Advance the consuming states over the character.
            states.generation += 1
            if let byte = unit.byte {
                for index in 0..<consumingCount {
                    let state = consuming[index]
                    let ascii = code[state].ascii
                    let bits = byte < 64 ? ascii.low >> UInt64(byte) : ascii.high >> UInt64(byte - 64)
                    if bits & 1 != 0 { states.add(state + 1) }
                }
            } else {
                for index in 0..<consumingCount {
                    let state = consuming[index]
                    if matchers[Int(code[state].first)].matches(unit.character) { states.add(state + 1) }
                }
            }
            if states.count == 0 && isAnchoredAtStart { return false }
            previousIsNewline = unit.isNewline
            offset += unit.utf8Count
            isStart = false
            current = following
            if current != nil { following = cursor.next() }
        }
    }
}
