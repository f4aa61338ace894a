#if canImport(Glibc)
import Glibc
#endif

/// IMF-fixdate, the HTTP date format (RFC 9110, section 5.6.7).
enum HTTPDate {
    static func now() -> Int {
        Int(time(nil))
    }

    static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for 784111777.
    static func format(secondsSinceEpoch: Int) -> String {
        var seconds = time_t(secondsSinceEpoch)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
