package polygraph

import "flag"

var probe = flag.Bool("probe", false, "run the timing probe")
