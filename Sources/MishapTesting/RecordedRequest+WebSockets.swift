// What `RecordedRequest.webSocket?.ending` holds, usable with `import MishapTesting` alone.
@_exported import struct MishapHTTP.WebSocketOutcome
