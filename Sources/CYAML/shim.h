#ifndef MISHAP_CYAML_H
#define MISHAP_CYAML_H

#include <yaml.h>

#endif
