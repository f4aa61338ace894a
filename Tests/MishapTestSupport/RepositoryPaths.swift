import Foundation

/// The repository's `scenarios/` folder: what `mishap serve` answers with out of the box.
public let defaultScenariosDirectory: String = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("scenarios").path
