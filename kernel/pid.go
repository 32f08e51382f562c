package kernel

import "os"

// pid is this process's id, recorded in provider URLs ("pid").
var pid = os.Getpid()
