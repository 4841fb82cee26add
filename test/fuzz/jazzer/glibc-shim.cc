// What the prebuilt Jazzer.js addon (built on glibc 2.38 / GCC 13) needs and Debian 12 (glibc 2.36,
// GCC 12's libstdc++) lacks: the C23 strtol variants (the same functions without C23's "0b" prefix) and
// GCC 13's out-of-line iostream initialiser (this file's own <iostream> include initialises the streams).
#include <cstdlib>
#include <iostream>

extern "C" long __isoc23_strtol(const char* s, char** end, int base) { return std::strtol(s, end, base); }
extern "C" unsigned long __isoc23_strtoul(const char* s, char** end, int base) {
  return std::strtoul(s, end, base);
}
namespace std {
void ios_base_library_init() {}
}
