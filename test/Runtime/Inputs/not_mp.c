// A shared object that is not an mp library.
int not_an_mp_library(void) { return 42; }
