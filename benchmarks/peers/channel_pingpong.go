// Go's side of benchmarks/peers/channel_pingpong: two goroutines ping-pong an int over a pair
// of channels (unbuffered, and buffered with capacity 2), with GOMAXPROCS = 1 and 2. One
// operation = one message (a round trip is two). Prints one JSON line per measurement, in
// the format of benchmarks/support/harness.hpp.
package main

import (
	"flag"
	"fmt"
	"runtime"
	"sort"
	"time"
)

func pingpong(capacity int, messages int) time.Duration {
	ping := make(chan int, capacity)
	pong := make(chan int, capacity)
	done := make(chan struct{})
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(done)
	}()
	start := time.Now()
	for i := 0; i < messages/2; i++ {
		ping <- i
		<-pong
	}
	elapsed := time.Since(start)
	close(ping)
	<-done
	return elapsed
}

func main() {
	messages := flag.Int("n", 1000000, "messages per repetition")
	reps := flag.Int("reps", 5, "repetitions")
	flag.Parse()
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for _, capacity := range []int{0, 2} {
			name := "rendezvous"
			if capacity > 0 {
				name = "buffered2"
			}
			pingpong(capacity, *messages/10) // warm up
			var perOp []float64
			for r := 0; r < *reps; r++ {
				perOp = append(perOp, float64(pingpong(capacity, *messages).Nanoseconds())/float64(*messages))
			}
			sort.Float64s(perOp)
			fmt.Printf("{\"name\":\"%s\",\"system\":\"go\",\"processors\":%d,\"ns_per_op\":%.2f,\"min_ns\":%.2f,\"max_ns\":%.2f,\"operations\":%d,\"repetitions\":%d}\n",
				name, procs, perOp[len(perOp)/2], perOp[0], perOp[len(perOp)-1], *messages, *reps)
		}
	}
}
