#ifndef MISHAP_CMICROHTTPD_H
#define MISHAP_CMICROHTTPD_H

#include <sys/types.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdint.h>
#include <microhttpd.h>

#endif
