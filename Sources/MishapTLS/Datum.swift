import CGnuTLS

/// GnuTLS's byte strings (`gnutls_datum_t`) to and from Swift.
enum Datum {
    /// Runs `body` with a datum over `text`'s bytes.
    static func withDatum<T>(_ text: String, _ body: (UnsafePointer<gnutls_datum_t>) throws(TLSError) -> T) throws(TLSError) -> T {
        var bytes = Array(text.utf8)
        let count = bytes.count
        return try bytes.withUnsafeMutableBufferPointer { (buffer: inout UnsafeMutableBufferPointer<UInt8>) throws(TLSError) -> T in
            var datum = gnutls_datum_t(data: buffer.baseAddress, size: UInt32(count))
            return try body(&datum)
        }
    }

    /// A datum GnuTLS allocated, as text, freed.
    static func take(_ datum: inout gnutls_datum_t) -> String {
        defer { mishap_gnutls_free(datum.data) }
        guard let data = datum.data else { return "" }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(datum.size)), as: UTF8.self)
    }
}
