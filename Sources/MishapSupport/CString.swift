#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// C strings of their own, for C libraries that keep a pointer for longer than a call (the PEM
/// texts libmicrohttpd reads while it runs): copied with `strdup`, given back with `free`.
public enum CString {
    /// A copy of `text` as a C string, to be given back with `free(_:wiping:)`.
    public static func copy(_ text: String) -> UnsafeMutablePointer<CChar> {
        strdup(text)
    }

    /// Gives back a string of `copy` (nothing for nil); `wiping` overwrites its bytes with
    /// zeros first, for secrets such as a private key.
    public static func free(_ pointer: UnsafeMutablePointer<CChar>?, wiping: Bool = false) {
        guard let pointer else { return }
        if wiping { memset(pointer, 0, strlen(pointer)) }
        freeMemory(pointer)
    }
}

// The C call under a name of its own: inside `CString`, `free` names its method.
private func freeMemory(_ pointer: UnsafeMutableRawPointer) {
    free(pointer)
}
