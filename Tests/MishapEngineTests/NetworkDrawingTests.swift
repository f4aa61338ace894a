import Testing
@testable import MishapEngine

/// Drawing what a network profile does to one answer: the latency distributions (seeded, so
/// each figure is the same at every run), the jitter, the loss, and the offline window.
@Suite struct NetworkDrawingTests {
    private func draws(_ latency: NetworkLatency, count: Int = 4000, seed: UInt64 = 42) -> [Int] {
        let random = RandomSource(seed: seed)
        return (0..<count).map { _ in latency.milliseconds(random) }.sorted()
    }

    @Test func fixedIsAlwaysItsValue() {
        #expect(Set(draws(.fixed(300), count: 50)) == [300])
    }

    @Test func uniformStaysInItsRangeAndFillsIt() {
        let values = draws(.uniform(100...300))
        #expect(values.first! >= 100 && values.last! <= 300)
        #expect(values.first! < 110 && values.last! > 290)
        #expect(abs(values[values.count / 2] - 200) < 15)
    }

    @Test func normalCentresOnItsMeanWithItsDeviation() {
        let values = draws(.normal(meanMilliseconds: 500, deviationMilliseconds: 100))
        let mean = Double(values.reduce(0, +)) / Double(values.count)
        #expect(abs(mean - 500) < 10)
        // About 68 % within one deviation.
        let within = values.filter { (400...600).contains($0) }.count
        #expect((0.64...0.72).contains(Double(within) / Double(values.count)))
    }

    @Test func normalBelowZeroCountsAsZero() {
        let values = draws(.normal(meanMilliseconds: 0, deviationMilliseconds: 100))
        #expect(values.first == 0)
        #expect(values.filter { $0 == 0 }.count > values.count / 3)
    }

    @Test func logNormalHasItsMedianAndItsSpread() {
        let values = draws(.logNormal(medianMilliseconds: 200, spread: 2))
        let median = values[values.count / 2]
        #expect(abs(median - 200) < 15, "median \(median)")
        // About two in three within median / spread ... median * spread.
        let within = values.filter { (100...400).contains($0) }.count
        #expect((0.63...0.73).contains(Double(within) / Double(values.count)))
        // A long tail: the highest draws are far above the median.
        #expect(values[values.count * 99 / 100] > 600)
    }

    @Test func drawsAreClampedToADay() {
        let values = draws(.logNormal(medianMilliseconds: 80_000_000, spread: 50), count: 200)
        #expect(values.last! == DurationText.maximumMilliseconds)
        #expect(values.allSatisfy { $0 >= 0 })
    }

    @Test func theSameSeedDrawsTheSameLatencies() {
        #expect(draws(.logNormal(medianMilliseconds: 200, spread: 3), count: 100, seed: 7)
            == draws(.logNormal(medianMilliseconds: 200, spread: 3), count: 100, seed: 7))
    }

    @Test func jitterAddsUpToItsValue() {
        let profile = NetworkProfile(latency: .fixed(100), jitterMilliseconds: 50)
        let random = RandomSource(seed: 1)
        let added = (0..<1000).map { _ in profile.shaping(random).addedLatencyMilliseconds }
        #expect(added.min()! >= 100 && added.max()! <= 150)
        #expect(added.min()! < 105 && added.max()! > 145)
    }

    @Test func lossResetsItsFractionOfRequests() {
        let profile = NetworkProfile(loss: 0.3)
        let random = RandomSource(seed: 3)
        let lost = (0..<2000).filter { _ in profile.shaping(random).resetReason == "loss" }.count
        #expect((540...660).contains(lost), "\(lost) of 2000")
        #expect((0..<50).allSatisfy { _ in NetworkProfile(loss: 1).shaping(random).resetReason == "loss" })
        #expect((0..<50).allSatisfy { _ in NetworkProfile(latency: .fixed(5)).shaping(random).resetReason == nil })
    }

    @Test func offlineResetsAtOnceWithoutALatency() {
        let shaping = NetworkPresets.named("edge")!.shaping(RandomSource(seed: 1), offline: true)
        #expect(shaping.resetReason == "offline" && shaping.addedLatencyMilliseconds == 0)
        #expect(shaping.profile == "edge")
    }

    @Test func theShapingCarriesWhatHappensOnTheSocket() {
        let profile = NetworkProfile(latency: .uniform(10...20), jitterMilliseconds: 5, latencyPerChunk: true,
                                     downBytesPerSecond: 20_000, resetAfter: .fraction(0.4), slowCloseMilliseconds: 700)
        let shaping = profile.shaping(RandomSource(seed: 9))
        #expect(shaping.profile == "custom")
        #expect(shaping.downBytesPerSecond == 20_000 && shaping.resetAfter == .fraction(0.4))
        #expect(shaping.slowCloseMilliseconds == 700 && shaping.chunkLatencyMilliseconds == 15 && shaping.chunkJitterMilliseconds == 5)
        #expect(shaping.shapesDelivery)
        #expect(!NetworkPresets.named("high-latency")!.shaping(RandomSource(seed: 1)).shapesDelivery)
    }

    @Test func uploadShapingComesFromTheUploadKnobs() {
        #expect(NetworkProfile(latency: .fixed(5)).uploadShaping == nil)
        let shaping = NetworkProfile(upBytesPerSecond: 8000, upload: .answerEarly(413)).uploadShaping
        #expect(shaping?.upBytesPerSecond == 8000 && shaping?.fault == .answerEarly(413))
    }
}
