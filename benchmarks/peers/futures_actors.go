// Go's versions of the futures and actors ping-pong benchmarks (benchmarks/micro/futures_actors.cpp),
// with GOMAXPROCS=1 unless -procs says otherwise. A future is a goroutine writing its value into a
// one-slot channel; an actor is a goroutine serving a channel of requests, replying on a channel.
// Prints one JSON line per measurement, in the harness's format: the median of -reps runs.
//
// Usage: futures_actors [-n N] [-reps R] [-procs P]
package main

import (
	"flag"
	"fmt"
	"runtime"
	"sort"
	"time"
)

func measure(name string, procs int, ops int, reps int, body func()) {
	body() // warm up
	perOp := make([]float64, 0, reps)
	for r := 0; r < reps; r++ {
		t0 := time.Now()
		body()
		perOp = append(perOp, float64(time.Since(t0).Nanoseconds())/float64(ops))
	}
	sort.Float64s(perOp)
	fmt.Printf("{\"name\":\"%s\",\"system\":\"go\",\"processors\":%d,\"ns_per_op\":%.2f,\"min_ns\":%.2f,\"max_ns\":%.2f,"+
		"\"operations\":%d,\"repetitions\":%d}\n", name, procs, perOp[len(perOp)/2], perOp[0], perOp[len(perOp)-1], ops, reps)
}

type request struct {
	value int
	reply chan int // nil: a send, nobody waits
}

func server(requests chan request, total *int) {
	for r := range requests {
		*total += r.value
		if r.reply != nil {
			r.reply <- *total
		}
	}
}

func main() {
	n := flag.Int("n", 100000, "operations per repetition")
	reps := flag.Int("reps", 5, "repetitions")
	procs := flag.Int("procs", 1, "GOMAXPROCS")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)

	// Future: start a computation, wait for its value.
	measure("future_get", *procs, *n, *reps, func() {
		for i := 0; i < *n; i++ {
			f := make(chan int, 1)
			go func(v int) { f <- v }(i)
			<-f
		}
	})
	// Promise ping-pong: two goroutines answer each other through fresh one-shot channels.
	measure("promise_pingpong", *procs, *n, *reps, func() {
		pings := make(chan chan int, 1)
		done := make(chan bool)
		go func() {
			for i := 0; i < *n; i++ {
				p := <-pings
				p <- i
			}
			done <- true
		}()
		for i := 0; i < *n; i++ {
			p := make(chan int, 1)
			pings <- p
			<-p
		}
		<-done
	})
	// Actor call: request and wait for the reply (unbuffered mailbox, as a synchronous call).
	measure("actor_call", *procs, *n, *reps, func() {
		requests := make(chan request)
		total := 0
		go server(requests, &total)
		reply := make(chan int)
		for i := 0; i < *n; i++ {
			requests <- request{1, reply}
			<-reply
		}
		close(requests)
	})
	// Actor send: queue without waiting (buffered mailbox); a call after every 1000 waits for them.
	measure("actor_send", *procs, *n, *reps, func() {
		requests := make(chan request, 1024)
		total := 0
		go server(requests, &total)
		reply := make(chan int)
		for i := 0; i < *n; i++ {
			requests <- request{1, nil}
			if i%1000 == 999 { // wait for the batch, as the C++ side does
				requests <- request{0, reply}
				<-reply
			}
		}
		requests <- request{0, reply}
		<-reply
		close(requests)
	})
}
