import MishapEngine
import MishapSupport

/// The OpenAPI 3.1 description of the admin API, `GET /__mishap/openapi.json`: one source
/// file, `OpenAPI/openapi.json`, embedded in the binary as the dashboard's files are (SwiftPM's
/// `embedInCode`), and served under the admin API's access rules like its other reads. A new
/// admin route goes into that file in the same change (`OpenAPIDescriptionTests` compares it
/// with the route table; `make api-check` fuzzes the server against it with schemathesis).
enum OpenAPIDescription {
    /// The description's bytes, as written in the source file.
    static let bytes: [UInt8] = PackageResources.openapi_json

    /// The answer to `GET /__mishap/openapi.json`.
    static func respond() -> ResponsePlan {
        ResponsePlan(status: 200, headers: [Field("Content-Type", "application/json; charset=utf-8"),
                                            Field("Cache-Control", "no-cache")],
                     body: bytes)
    }
}
