#ifndef MISHAP_SHIM_H
#define MISHAP_SHIM_H

#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <microhttpd.h>

/// Receives one formatted line of libmicrohttpd's error log.
typedef void (*mishap_log_fn)(void *cls, const char *message);

/// Where libmicrohttpd's error log goes; must outlive the daemon.
struct mishap_logger {
    mishap_log_fn log;
    void *cls;
};

/// Everything `mishap_start_daemon` passes to `MHD_start_daemon`, which is variadic and so
/// cannot be called from Swift
/// (docs/libmicrohttpd.md, "Variadic functions need the shim" and "Daemon flags and options").
struct mishap_daemon_config {
    unsigned int flags;
    uint16_t port;
    /// The address to bind (IPv4 or IPv6); NULL binds every interface.
    const struct sockaddr *address;
    unsigned int thread_pool_size;
    unsigned int connection_limit;
    unsigned int connection_timeout_seconds;
    unsigned int listen_backlog;
    size_t connection_memory_limit;
    MHD_AccessHandlerCallback handler;
    void *handler_cls;
    MHD_RequestCompletedCallback completed;
    void *completed_cls;
    struct mishap_logger *logger;
    /// Told when each connection opens and closes (`MHD_OPTION_NOTIFY_CONNECTION`); NULL for none.
    MHD_NotifyConnectionCallback notify_connection;
    void *notify_connection_cls;
    /// HTTPS: the private key and the certificate chain as NUL-terminated PEM texts, both or
    /// neither (then plain HTTP), and GnuTLS priorities (NULL: GnuTLS's defaults).
    const char *https_key_pem;
    const char *https_cert_pem;
    const char *https_priorities;
};

/// Starts the daemon. Its URI log callback (`MHD_OPTION_URI_LOG_CALLBACK`) scans each request's
/// raw target before libmicrohttpd decodes it in place, and stores `mishap_encoded_nul_marker()`
/// as the request's context when the path (before any `?`) holds an encoded NUL (`%00`), which
/// decoding turns into the end of the path's C string; otherwise the context stays NULL
/// (docs/libmicrohttpd.md, "An encoded NUL cuts the path").
struct MHD_Daemon *mishap_start_daemon(const struct mishap_daemon_config *config);

/// The context the URI log callback gives a request whose path holds `%00`: never a valid
/// pointer to anything else.
void *mishap_encoded_nul_marker(void);

/// The port the daemon listens on (meaningful when it was started with port 0).
uint16_t mishap_daemon_port(struct MHD_Daemon *daemon);

/// The socket of a connection, or -1 (`MHD_get_connection_info` is variadic).
int mishap_connection_fd(struct MHD_Connection *connection);

/// 1 when the connection's client is on this machine (127.0.0.0/8, ::1, or ::ffff:127.x), else 0.
int mishap_connection_is_loopback(struct MHD_Connection *connection);

/// The client's address as text (an IPv4 address, or an IPv6 one, an IPv4-mapped one written
/// as IPv4) into `buffer`: 0, or -1 when it is not known or does not fit.
int mishap_connection_client_address(struct MHD_Connection *connection, char *buffer, size_t size);

/// How many headers of a request bear on how its body is framed, counted in one pass over its
/// headers (names compared without case).
struct mishap_framing_headers {
    /// `Transfer-Encoding` headers.
    unsigned int transfer_encoding;
    /// `Content-Length` headers.
    unsigned int content_length;
    /// `Expect: 100-continue` headers.
    unsigned int expect_continue;
};

/// Counts the framing headers of the connection's current request.
struct mishap_framing_headers mishap_count_framing_headers(struct MHD_Connection *connection);

/// Sets response flags (`MHD_set_response_options` is variadic).
enum MHD_Result mishap_response_set_flags(struct MHD_Response *response, enum MHD_ResponseFlags flags);

/// The connection's socket context, set by the connection notification (NULL when none was
/// set; `MHD_get_connection_info` is variadic).
void *mishap_connection_socket_context(struct MHD_Connection *connection);

/// The bytes of the request line and headers as received (`MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE`), or 0.
size_t mishap_connection_head_size(struct MHD_Connection *connection);

/// Accepts every connection waiting on `listening` (a non-blocking listening socket of Mishap's
/// own) and hands each to the daemon (`MHD_add_connection`, which closes the socket itself when
/// it refuses one, at the connection limit). Returns how many were accepted, or -1 when the
/// system is out of descriptors or memory (the caller waits a little before trying again); never
/// blocks (docs/libmicrohttpd.md, "A listening socket of Mishap's own").
int mishap_accept_connections(struct MHD_Daemon *daemon, int listening);

/// Tells libmicrohttpd that Mishap is done with an upgraded connection's socket
/// (`MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE)`, which is variadic): called exactly
/// once per upgraded connection, after Mishap's own loop has stopped using the socket
/// (docs/libmicrohttpd.md, "Upgraded connections (WebSocket)").
enum MHD_Result mishap_upgrade_close(struct MHD_UpgradeResponseHandle *urh);

#endif
