/*
 * baseline.c: the C yardstick for Mishap's benchmarks.
 *
 * A minimal libmicrohttpd server configured the way Mishap is (internal polling thread + epoll,
 * a thread pool of one thread per core, connection limit 4096, loopback only) that answers every
 * request, whatever its method or URL, with one prebuilt response:
 *
 *     200 {"isAvailable":true,"userName":"someone"}   Content-Type: application/json; charset=utf-8
 *
 * Nothing is parsed or matched, so this is the ceiling for any server on libmicrohttpd on this
 * machine; benchmarks/run.sh reports Mishap's figures as a ratio of this one's.
 *
 * Build: cc -O2 -o baseline baseline.c $(pkg-config --cflags --libs libmicrohttpd)
 * Run:   ./baseline PORT                   (0 = any free port; the first stdout line tells which)
 *        ./baseline PORT CERT.pem KEY.pem  (HTTPS with that certificate and key, as Mishap's
 *                                           --tls-cert and --tls-key, for the HTTPS rows)
 */
#include <microhttpd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char BODY[] = "{\"isAvailable\":true,\"userName\":\"someone\"}";
static struct MHD_Response *response;
static int first_call_marker; /* its address marks "first call seen" in *req_cls */

static enum MHD_Result handler(void *cls, struct MHD_Connection *connection, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **req_cls) {
  (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
  if (*req_cls == NULL) {          /* keep-alive trap: never queue on the first call */
    *req_cls = &first_call_marker;
    return MHD_YES;
  }
  if (*upload_data_size != 0) {    /* swallow a request body (POST /login) */
    *upload_data_size = 0;
    return MHD_YES;
  }
  return MHD_queue_response(connection, MHD_HTTP_OK, response);
}

/* A whole small file as a NUL-terminated string, or NULL. */
static char *read_file(const char *path) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) return NULL;
  static char buffer[2][65536];
  static int next;
  char *text = buffer[next++ % 2];
  size_t size = fread(text, 1, sizeof buffer[0] - 1, file);
  fclose(file);
  text[size] = 0;
  return text;
}

int main(int argc, char **argv) {
  unsigned port = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
  const char *cert = argc > 3 ? read_file(argv[2]) : NULL;
  const char *key = argc > 3 ? read_file(argv[3]) : NULL;
  if (argc > 3 && (cert == NULL || key == NULL)) {
    fprintf(stderr, "baseline: cannot read %s or %s\n", argv[2], argv[3]);
    return 1;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;

  response = MHD_create_response_from_buffer(strlen(BODY), (void *)BODY, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");

  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

  /* SIGINT and SIGTERM are blocked before the daemon's threads start, so they inherit the mask
   * and the signal reaches sigwait below (a handler plus pause() can miss a signal delivered to
   * a worker thread, which happens under valgrind). */
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

  /* HTTPS options only with MHD_USE_TLS: libmicrohttpd warns about them otherwise. */
  struct MHD_OptionItem tls_options[] = {
      {cert ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, (void *)key},
      {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert},
      {MHD_OPTION_END, 0, NULL},
  };
  struct MHD_Daemon *daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | (cert ? MHD_USE_TLS : 0), (uint16_t)port,
      NULL, NULL, handler, NULL,
      MHD_OPTION_ARRAY, tls_options,
      MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
      MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(cores > 1 ? cores : 0),
      MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4096,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
      MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
      MHD_OPTION_END);
  if (daemon == NULL) {
    fprintf(stderr, "baseline: cannot start the daemon on port %u\n", port);
    return 1;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  printf("baseline listening on %s://127.0.0.1:%u\n", cert ? "https" : "http", info ? (unsigned)info->port : port);
  fflush(stdout);

  int received;
  sigwait(&stop_signals, &received);

  MHD_stop_daemon(daemon);
  MHD_destroy_response(response);
  return 0;
}
