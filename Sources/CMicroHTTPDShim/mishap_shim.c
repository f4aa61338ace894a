#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // accept4
#endif
#include <netinet/in.h>
#include <arpa/inet.h>
#include "mishap_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static void mishap_log_trampoline(void *cls, const char *format, va_list ap) {
    struct mishap_logger *logger = cls;
    char line[512];
    vsnprintf(line, sizeof line, format, ap);
    if (logger != NULL && logger->log != NULL) {
        logger->log(logger->cls, line);
    }
}

static char encoded_nul_marker;

void *mishap_encoded_nul_marker(void) {
    return &encoded_nul_marker;
}

/// Returns `cls` (the marker) when the path of the raw target, before any `?`, holds `%00`.
/// `uri` is NULL for a request line without a target. Runs for every request: a target without
/// `%` costs one `strchr`.
static void *mishap_scan_target(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)connection;
    if (uri == NULL) return NULL;
    for (const char *p = strchr(uri, '%'); p != NULL; p = strchr(p + 1, '%')) {
        if (p[1] == '0' && p[2] == '0') {
            return memchr(uri, '?', (size_t)(p - uri)) == NULL ? cls : NULL;
        }
    }
    return NULL;
}

struct MHD_Daemon *mishap_start_daemon(const struct mishap_daemon_config *config) {
    struct MHD_OptionItem options[20];
    int n = 0;
    // The logger first: libmicrohttpd warns about options given before it, to the default log.
    if (config->logger != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mishap_log_trampoline, config->logger };
    }
    if (config->address != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)config->address };
    }
    if (config->thread_pool_size > 1) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, config->thread_pool_size, NULL };
    }
    if (config->connection_limit > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, config->connection_limit, NULL };
    }
    if (config->connection_timeout_seconds > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, config->connection_timeout_seconds, NULL };
    }
    if (config->listen_backlog > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_BACKLOG_SIZE, config->listen_backlog, NULL };
    }
    if (config->connection_memory_limit > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)config->connection_memory_limit, NULL };
    }
    if (config->completed != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)config->completed, config->completed_cls };
    }
    if (config->notify_connection != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)config->notify_connection, config->notify_connection_cls };
    }
    // HTTPS (the caller adds MHD_USE_TLS to the flags): the PEM texts are read when the daemon
    // starts; the priorities choose protocol versions and ciphers.
    if (config->https_key_pem != NULL && config->https_cert_pem != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)config->https_key_pem };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)config->https_cert_pem };
        if (config->https_priorities != NULL) {
            options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)config->https_priorities };
        }
    }
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)mishap_scan_target, &encoded_nul_marker };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

    return MHD_start_daemon(config->flags, config->port,
                            NULL, NULL,
                            config->handler, config->handler_cls,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

uint16_t mishap_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int mishap_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// The client's address, decoded once for both uses below: its IPv4 address in `*v4` (also for
/// an IPv4-mapped IPv6 address), or its IPv6 address in `*v6`; 0 when known, -1 when not.
static inline int mishap_client_address(struct MHD_Connection *connection,
                                        const struct in_addr **v4, const struct in6_addr **v6) {
    *v4 = NULL;
    *v6 = NULL;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        *v4 = &((const struct sockaddr_in *)address)->sin_addr;
        return 0;
    }
    if (address->sa_family == AF_INET6) {
        const struct in6_addr *six = &((const struct sockaddr_in6 *)address)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(six)) {
            *v4 = (const struct in_addr *)(const void *)&six->s6_addr[12];
        } else {
            *v6 = six;
        }
        return 0;
    }
    return -1;
}

int mishap_connection_is_loopback(struct MHD_Connection *connection) {
    const struct in_addr *v4;
    const struct in6_addr *v6;
    if (mishap_client_address(connection, &v4, &v6) != 0) return 0;
    if (v4 != NULL) return ((const unsigned char *)v4)[0] == 127;
    return IN6_IS_ADDR_LOOPBACK(v6);
}

int mishap_connection_client_address(struct MHD_Connection *connection, char *buffer, size_t size) {
    const struct in_addr *v4;
    const struct in6_addr *v6;
    if (size == 0 || mishap_client_address(connection, &v4, &v6) != 0) return -1;
    const char *written = v4 != NULL ? inet_ntop(AF_INET, v4, buffer, (socklen_t)size) : inet_ntop(AF_INET6, v6, buffer, (socklen_t)size);
    return written == NULL ? -1 : 0;
}

static enum MHD_Result mishap_count_framing_header(void *cls, enum MHD_ValueKind kind,
                                                   const char *key, size_t key_size,
                                                   const char *value, size_t value_size) {
    (void)kind;
    struct mishap_framing_headers *counts = cls;
    // The length and the first letter rule out most headers before a comparison is called.
    switch (key_size) {
    case 17:
        if ((key[0] | 0x20) == 't' && strncasecmp(key, "Transfer-Encoding", 17) == 0) counts->transfer_encoding++;
        break;
    case 14:
        if ((key[0] | 0x20) == 'c' && strncasecmp(key, "Content-Length", 14) == 0) counts->content_length++;
        break;
    case 6:
        if ((key[0] | 0x20) == 'e' && strncasecmp(key, "Expect", 6) == 0 && value != NULL && value_size == 12
            && strncasecmp(value, "100-continue", 12) == 0) counts->expect_continue++;
        break;
    }
    return MHD_YES;
}

struct mishap_framing_headers mishap_count_framing_headers(struct MHD_Connection *connection) {
    struct mishap_framing_headers counts = { 0, 0, 0 };
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, mishap_count_framing_header, &counts);
    return counts;
}

enum MHD_Result mishap_response_set_flags(struct MHD_Response *response, enum MHD_ResponseFlags flags) {
    return MHD_set_response_options(response, flags, MHD_RO_END);
}

void *mishap_connection_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

size_t mishap_connection_head_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

int mishap_accept_connections(struct MHD_Daemon *daemon, int listening) {
    int accepted = 0;
    for (;;) {
        struct sockaddr_storage address;
        socklen_t length = sizeof address;
#ifdef __linux__
        int socket = accept4(listening, (struct sockaddr *)&address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
        int socket = accept(listening, (struct sockaddr *)&address, &length);
        if (socket >= 0) {
            (void)fcntl(socket, F_SETFD, FD_CLOEXEC);
            (void)fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK);
        }
#endif
        if (socket < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) return -1;
            return accepted;  // EAGAIN: none left (or the socket was shut down)
        }
        accepted += 1;
        // Refused at the connection limit: libmicrohttpd has closed the socket.
        (void)MHD_add_connection(daemon, socket, (const struct sockaddr *)&address, length);
    }
}

enum MHD_Result mishap_upgrade_close(struct MHD_UpgradeResponseHandle *urh) {
    return MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}
