import Testing
@testable import MishapEngine

/// The request path's string table must answer exactly as a `Dictionary` of the same entries.
@Suite struct StringTableTests {
    @Test func findsEveryKeyAndNothingElse() {
        var reference: [String: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for index in 0..<500 {
            let length = Int.random(in: 0...40, using: &generator)
            let key = String((0..<length).map { _ in "ab/é{}_-?".randomElement(using: &generator)! })
            reference[key] = index
        }
        let table = StringTable(reference)
        #expect(table.count == reference.count)
        for (key, value) in reference { #expect(table[key] == value, "\(key)") }
        for probe in ["", "zz", "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q", "a\u{0}", "ab/é{}_-?x"] where reference[probe] == nil {
            #expect(table[probe] == nil, "\(probe)")
        }
        #expect(Dictionary(uniqueKeysWithValues: table.entries.map { ($0.key, $0.value) }) == reference)
    }

    @Test func aRepeatedKeyKeepsItsLastValue() {
        let table = StringTable([(key: "/login", value: 1), (key: "/other", value: 2), (key: "/login", value: 3)])
        #expect(table.count == 2)
        #expect(table["/login"] == 3)
        #expect(table["/other"] == 2)
    }

    @Test func anEmptyTableFindsNothing() {
        let table = StringTable<Int>([(key: String, value: Int)]())
        #expect(table.count == 0)
        #expect(table[""] == nil)
        #expect(table["/"] == nil)
    }

    /// Keys that differ only past the small-string limit, and keys of the same hash, are told
    /// apart byte for byte.
    @Test func comparesWholeKeys() {
        // "glbvs" and "yacxa" have the same 32-bit FNV-1a hash.
        let colliding = StringTable([(key: "glbvs", value: 1)])
        #expect(colliding["glbvs"] == 1)
        #expect(colliding["yacxa"] == nil)
        let both = StringTable([(key: "glbvs", value: 1), (key: "yacxa", value: 2)])
        #expect(both["glbvs"] == 1)
        #expect(both["yacxa"] == 2)
        let long = String(repeating: "x", count: 64)
        let table = StringTable([(key: long + "a", value: 1), (key: long + "b", value: 2)])
        #expect(table[long + "a"] == 1)
        #expect(table[long + "b"] == 2)
        #expect(table[long + "c"] == nil)
        #expect(table[long] == nil)
    }
}
