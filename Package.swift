// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Mishap",
    // Linux is where Mishap is built and tested. macOS 15 is the first with the Synchronization
    // module (Mutex, Atomic); Mishap is not built or tested there yet.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "mishap", targets: ["mishap"]),
        .executable(name: "mishap-import", targets: ["mishap-import"]),
        .library(name: "MishapEngine", targets: ["MishapEngine"]),
        .library(name: "MishapScenarios", targets: ["MishapScenarios"]),
        .library(name: "MishapHTTP", targets: ["MishapHTTP"]),
        .library(name: "MishapTLS", targets: ["MishapTLS"]),
        .library(name: "MishapService", targets: ["MishapService"]),
        .library(name: "MishapTesting", targets: ["MishapTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // OpenAPI 3.0 and 3.1 descriptions read for `mishap import openapi`, and only there: no
        // trait (its default, ExternalLoading, fetches external references and builds slower).
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
    ],
    targets: [
        // libmicrohttpd itself, found through pkg-config.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        // The few C functions Swift cannot call directly (variadic ones, va_list loggers).
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD"]),
        // libyaml itself, found through pkg-config: scenario files are read with its event parser.
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),

        // GnuTLS, found through pkg-config (libmicrohttpd serves HTTPS with it): certificates.
        .systemLibrary(
            name: "CGnuTLS",
            pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"]), .brew(["gnutls"])]
        ),

        // libcurl's header (Debian's libcurl4-gnutls-dev: the GnuTLS flavour, as libmicrohttpd's
        // TLS is GnuTLS), for requests sent on to an upstream server. Not linked: the shim
        // loads the library only when an upstream is set, so a Mishap without one never
        // loads libcurl and the libraries it needs (docs/libcurl.md).
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-gnutls-dev"])]),
        // libcurl loaded with dlopen, and its variadic option setters and info getters, which
        // Swift cannot call, as plain C functions.
        .target(name: "CCurlShim", dependencies: ["CCurl"], linkerSettings: [.linkedLibrary("dl")]),

        // What every layer shares, written once: JSON string escaping, the error body, Base64,
        // wall-clock dates, and the POSIX calls (files, descriptors, pipes, threads, folder
        // events) behind one platform seam. Internal: in no product.
        .target(name: "MishapSupport"),

        // The regular expressions of `matches` conditions, matched in linear time: pure Swift.
        .target(name: "MishapPattern"),
        // Scenario model and rule engine: pure Swift, no sockets, no YAML.
        .target(name: "MishapEngine", dependencies: ["MishapPattern", "MishapSupport"]),
        // Scenario files (YAML/JSON) compiled into the engine's model, with located errors.
        .target(
            name: "MishapScenarios",
            dependencies: ["MishapEngine", "MishapSupport", "CYAML"]
        ),
        // Certificates for HTTPS: a local certificate authority in a folder, the certificates it
        // issues, SPKI pins, and the TLS failure catalogue's certificates and protocol settings.
        .target(name: "MishapTLS", dependencies: ["MishapSupport", "CGnuTLS"]),
        // The HTTP server over libmicrohttpd: carries out the engine's response plans.
        .target(
            name: "MishapHTTP",
            dependencies: [
                "MishapEngine", "MishapSupport", "CMicroHTTPD", "CMicroHTTPDShim",
                // GnuTLS's SHA-1, for a WebSocket upgrade's Sec-WebSocket-Accept.
                "CGnuTLS",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Requests passed on to an upstream server and its answers passed back (`--upstream`),
        // through libcurl's multi interface on a thread of its own.
        .target(name: "MishapUpstream", dependencies: ["MishapEngine", "MishapSupport", "CCurl", "CCurlShim"]),
        // The upstream's answers written down as scenario files (`mishap record`): one file per
        // endpoint, a rule per distinct request. No sockets, no YAML library.
        .target(name: "MishapRecording", dependencies: ["MishapEngine", "MishapUpstream", "MishapSupport"]),
        // Mishap running: scenarios swapped whole on reload, the request journal, the
        // Retry-After check, the admin API and its dashboard, the folder watcher and the
        // request log.
        .target(
            name: "MishapService",
            dependencies: [
                "MishapEngine", "MishapScenarios", "MishapHTTP", "MishapTLS", "MishapUpstream", "MishapSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            // The dashboard's files and the admin API's OpenAPI description, built into the
            // binary as byte arrays (no Foundation, no files to install).
            resources: [
                .embedInCode("Dashboard/index.html"),
                .embedInCode("Dashboard/page.js"),
                .embedInCode("Dashboard/polling.js"),
                .embedInCode("Dashboard/requests.js"),
                .embedInCode("Dashboard/rules.js"),
                .embedInCode("Dashboard/sessions.js"),
                .embedInCode("Dashboard/retries.js"),
                .embedInCode("Dashboard/verdict.js"),
                .embedInCode("Dashboard/controls.js"),
                .embedInCode("Dashboard/app.js"),
                .embedInCode("Dashboard/app.css"),
                .embedInCode("OpenAPI/openapi.json"),
            ]
        ),
        // Mishap inside a test process: start on a free port, sessions, journal, retries, reset.
        .target(
            name: "MishapTesting",
            dependencies: [
                "MishapEngine", "MishapScenarios", "MishapHTTP", "MishapService",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command line: serve, record, start/stop/status, validate, routes.
        .executableTarget(
            name: "mishap",
            dependencies: [
                "MishapEngine", "MishapScenarios", "MishapHTTP", "MishapService", "MishapTLS", "MishapUpstream", "MishapRecording",
                "MishapSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // OpenAPI descriptions turned into scenario files (`mishap import openapi`): read with
        // OpenAPIKit (YAML through the scenario loader's own reader first), written with the
        // recorder's quoting. Kept out of `mishap` itself so that serve's binary and startup
        // carry no OpenAPI library.
        .target(
            name: "MishapImport",
            dependencies: [
                "MishapScenarios", "MishapRecording", "MishapSupport",
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "OpenAPIKit30", package: "OpenAPIKit"),
            ]
        ),
        // The importer's own executable, which `mishap import` runs from beside itself.
        .executableTarget(
            name: "mishap-import",
            dependencies: [
                "MishapImport", "MishapSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // What the test targets share: a Mishap started in process on a free port, a raw HTTP
        // client, URLSession answers, temporary folders, polling, and for the fuzz and random
        // tests a seeded generator, a scenario corpus and its mutations. Test code only, in no
        // product.
        .target(
            name: "MishapTestSupport",
            dependencies: [
                "MishapEngine", "MishapScenarios", "MishapHTTP", "MishapService",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/MishapTestSupport"
        ),

        .testTarget(name: "MishapSupportTests", dependencies: ["MishapSupport", "MishapTestSupport"]),
        .testTarget(name: "MishapPatternTests", dependencies: ["MishapPattern", "MishapTestSupport"]),
        .testTarget(name: "MishapEngineTests", dependencies: ["MishapEngine", "MishapTestSupport"]),
        .testTarget(name: "MishapTLSTests", dependencies: ["MishapTLS", "MishapHTTP", "MishapService", "MishapTestSupport"]),
        .testTarget(
            name: "MishapScenariosTests",
            dependencies: ["MishapScenarios", "MishapEngine", "MishapTestSupport"]
        ),
        .testTarget(
            name: "MishapHTTPTests",
            dependencies: [
                "MishapHTTP", "MishapService", "MishapScenarios", "MishapEngine", "MishapTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "MishapServiceTests",
            dependencies: [
                "MishapService", "MishapHTTP", "MishapScenarios", "MishapEngine", "MishapUpstream", "MishapRecording",
                "MishapTLS", "MishapTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "MishapRecordingTests",
            dependencies: ["MishapRecording", "MishapScenarios", "MishapEngine", "MishapUpstream", "MishapTestSupport"]
        ),
        // The fuzzers, in one target so that test groups name them once: HTTP/ (raw requests
        // against the server), the scenario loader, and `mishap validate` (run as a process).
        .testTarget(
            name: "MishapFuzzTests",
            dependencies: [
                "MishapHTTP", "MishapService", "MishapScenarios", "MishapEngine", "MishapTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Fixtures/: scenario folders the tests find beside their own files (#filePath).
        .testTarget(name: "MishapTestingTests", dependencies: ["MishapTesting", "MishapTestSupport"], exclude: ["Fixtures"]),
        // Imports OpenAPI descriptions (fixtures beside the tests, and a large one made by the
        // tests), loads and serves what is written, and decodes its answers.
        .testTarget(
            name: "MishapImportTests",
            dependencies: ["MishapImport", "MishapScenarios", "MishapEngine", "MishapService", "MishapTestSupport"],
            exclude: ["Fixtures"]
        ),
        // Runs the built `mishap` binary as a process (make test builds it first).
        .testTarget(name: "MishapCLITests", dependencies: ["MishapTestSupport"]),
    ]
)
