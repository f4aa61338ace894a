import ArgumentParser

/// `--port`: a TCP port (0 picks a free one), or `off` for no plain HTTP (HTTPS only, with
/// `--tls-port`).
enum PortSetting: Equatable, ExpressibleByArgument, CustomStringConvertible {
    case number(Int)
    case off

    init?(argument: String) {
        if argument == "off" {
            self = .off
        } else if let number = Int(argument) {
            self = .number(number)
        } else {
            return nil
        }
    }

    var description: String {
        switch self {
        case .number(let number): "\(number)"
        case .off: "off"
        }
    }

    var defaultValueDescription: String { description }

    /// The port number; nil for `off`.
    var number: Int? {
        if case .number(let number) = self { return number }
        return nil
    }
}
