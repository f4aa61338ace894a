/// The named network profiles, modelled on Apple's Network Link Conditioner's (Xcode's
/// Additional Tools, and Settings > Developer on a device), and `none`.
///
/// The Conditioner delays each packet in each direction; Mishap works above TCP, so a preset's
/// latency is its two delays added (one round trip, before the first byte of each answer), its
/// bandwidth the two directions' rates in bytes per second (kbps / 8 × 1000), and its packet
/// loss becomes jitter and stalls between pieces (a lost packet costs its retransmission), not
/// resets: `loss` is the knob for resets. `100-percent-loss` resets every request.
public enum NetworkPresets {
    public struct Preset: Sendable {
        public let name: String
        /// The Conditioner's figures, as it shows them.
        public let conditionerFigures: String
        public let profile: NetworkProfile
    }

    public static let all: [Preset] = [
        preset("none", "(no conditioning)", NetworkProfile(name: "none")),
        preset("wifi", "down 40 Mbps 1 ms, up 33 Mbps 1 ms",
               NetworkProfile(name: "wifi", latency: .fixed(2), downBytesPerSecond: 5_000_000, upBytesPerSecond: 4_125_000)),
        preset("lte", "down 50 Mbps 50 ms, up 10 Mbps 65 ms",
               NetworkProfile(name: "lte", latency: .fixed(115), downBytesPerSecond: 6_250_000, upBytesPerSecond: 1_250_000)),
        preset("dsl", "down 2 Mbps 5 ms, up 256 kbps 5 ms",
               NetworkProfile(name: "dsl", latency: .fixed(10), downBytesPerSecond: 250_000, upBytesPerSecond: 32_000)),
        preset("3g", "down 780 kbps 100 ms, up 330 kbps 100 ms",
               NetworkProfile(name: "3g", latency: .fixed(200), downBytesPerSecond: 97_500, upBytesPerSecond: 41_250)),
        preset("edge", "down 240 kbps 400 ms, up 200 kbps 440 ms",
               NetworkProfile(name: "edge", latency: .fixed(840), downBytesPerSecond: 30_000, upBytesPerSecond: 25_000)),
        preset("very-bad-network", "down 1 Mbps 10% loss 500 ms, up 1 Mbps 10% loss 500 ms",
               NetworkProfile(name: "very-bad-network", latency: .fixed(1_000), jitterMilliseconds: 1_000, latencyPerChunk: false,
                              downBytesPerSecond: 125_000, upBytesPerSecond: 125_000)),
        preset("high-latency", "DNS delay 3000 ms",
               NetworkProfile(name: "high-latency", latency: .fixed(3_000))),
        preset("100-percent-loss", "down and up: 100% loss",
               NetworkProfile(name: "100-percent-loss", loss: 1)),
    ]

    /// The preset named `name`: case does not matter, and spaces and underscores read as
    /// hyphens (`Very Bad Network`, `very_bad_network`).
    public static func named(_ name: String) -> NetworkProfile? {
        let key = String(name.lowercased().map { $0 == " " || $0 == "_" ? "-" : $0 })
        return all.first { $0.name == key }?.profile
    }

    /// The names, for an error message and usage.
    public static var names: [String] { all.map(\.name) }

    private static func preset(_ name: String, _ figures: String, _ profile: NetworkProfile) -> Preset {
        Preset(name: name, conditionerFigures: figures, profile: profile)
    }
}
