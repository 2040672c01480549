// The Go peer of presto_bench: the same workloads with goroutines, sync and channels,
// printing the same JSON lines (benchmarks/support/harness.hpp describes them). Processors are
// GOMAXPROCS. Standard library only. benchmarks/run.py builds and runs it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var repetitions = 7

type result struct {
	name, system, unit     string
	processors, param, ops uint64
	median, min, max       float64
	reps                   int
}

func (r result) print() {
	spread := 0.0
	if r.median > 0 {
		spread = 100 * (r.max - r.min) / r.median
	}
	fmt.Printf("{\"name\":\"%s\",\"system\":\"%s\",\"processors\":%d,\"ns_per_op\":%.2f,\"min_ns\":%.2f,"+
		"\"max_ns\":%.2f,\"operations\":%d,\"repetitions\":%d,\"param\":%d,\"spread_pct\":%.1f,\"unit\":\"%s\"}\n",
		r.name, r.system, r.processors, r.median, r.min, r.max, r.ops, r.reps, r.param, spread, r.unit)
}

// measure runs body once to warm up, then `repetitions` times, on p processors, and prints
// the median, min and max time per operation.
func measure(name string, p int, ops uint64, param uint64, body func()) {
	runtime.GOMAXPROCS(p)
	body()
	perOp := make([]float64, 0, repetitions)
	for r := 0; r < repetitions; r++ {
		t0 := time.Now()
		body()
		perOp = append(perOp, float64(time.Since(t0).Nanoseconds())/float64(ops))
	}
	sort.Float64s(perOp)
	result{name, "go", "ns", uint64(p), param, ops, perOp[len(perOp)/2], perOp[0], perOp[len(perOp)-1],
		repetitions}.print()
}

func scaled(quick bool, full, reduced uint64) uint64 {
	if quick {
		return reduced
	}
	return full
}

func yields(n uint64) {
	measure("yield", 1, n, 0, func() {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			for i := uint64(0); i < n/2; i++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
		for i := uint64(0); i < n/2; i++ {
			runtime.Gosched()
		}
		wg.Wait()
	})
}

func forkJoin(n uint64) {
	measure("fork_join", 1, n, 0, func() {
		var wg sync.WaitGroup
		for i := uint64(0); i < n; i++ {
			wg.Add(1)
			go func() { wg.Done() }()
			wg.Wait()
		}
	})
}

// onGoroutines runs loop(n/p) on p goroutines and waits for them.
func onGoroutines(p int, n uint64, loop func(uint64)) {
	var wg sync.WaitGroup
	for i := 1; i < p; i++ {
		wg.Add(1)
		go func() { loop(n / uint64(p)); wg.Done() }()
	}
	loop(n / uint64(p))
	wg.Wait()
}

func locks(p int, n uint64) {
	measure("lock_test", p, n, 0, func() {
		var m sync.Mutex
		onGoroutines(p, n, func(k uint64) {
			for i := uint64(0); i < k; i++ {
				m.Lock()
				m.Unlock()
			}
		})
	})
	measure("atom_test", p, n, 0, func() {
		var a atomic.Int64
		onGoroutines(p, n, func(k uint64) {
			for i := uint64(0); i < k; i++ {
				a.Add(1)
			}
		})
	})
}

// Ping-pong over unbuffered channels; one operation = one hand-off.
func channelPingPong(p int, n uint64) {
	measure("switch_test", p, n, 0, func() {
		ping, pong := make(chan struct{}), make(chan struct{})
		go func() {
			for i := uint64(0); i < n/2; i++ {
				<-ping
				pong <- struct{}{}
			}
		}()
		for i := uint64(0); i < n/2; i++ {
			ping <- struct{}{}
			<-pong
		}
	})
}

// The canonical Go skynet (github.com/atemerev/skynet): a channel per parent.
func skynet(c chan uint64, num, size uint64) {
	if size == 1 {
		c <- num
		return
	}
	rc := make(chan uint64, 10)
	for i := uint64(0); i < 10; i++ {
		go skynet(rc, num+i*(size/10), size/10)
	}
	var sum uint64
	for i := 0; i < 10; i++ {
		sum += <-rc
	}
	c <- sum
}

// curve returns the processor counts a curve is measured at: 1..maxP, or with doubling
// 1, 2, 4, ..., maxP (presto_bench --doubling).
func curve(maxP int, doubling bool) []int {
	var ps []int
	for p := 1; p < maxP; {
		ps = append(ps, p)
		if doubling {
			p *= 2
		} else {
			p++
		}
	}
	return append(ps, maxP)
}

// skynets measures skynet with `leaves` leaves on each of the processor counts ps.
func skynets(ps []int, leaves uint64) {
	threads := uint64(0)
	for level := leaves; level >= 1; level /= 10 {
		threads += leaves / level
	}
	for _, p := range ps {
		measure("skynet", p, threads, leaves, func() {
			c := make(chan uint64, 1)
			go skynet(c, 0, leaves)
			if sum := <-c; sum != leaves*(leaves-1)/2 {
				panic("skynet: wrong sum")
			}
		})
	}
}

func matmul(ps []int, counts []uint64) {
	const n = 200
	a, bt, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	for i := range a {
		a[i], bt[i] = float64(i%7), float64(i%5)
	}
	compute := func(first, last int) {
		for e := first; e < last; e++ {
			row, col := a[(e/n)*n:(e/n)*n+n], bt[(e%n)*n:(e%n)*n+n]
			sum := 0.0
			for k := 0; k < n; k++ {
				sum += row[k] * col[k]
			}
			c[e] = sum
		}
	}
	for _, p := range ps {
		for _, t := range counts {
			parts := int(t)
			measure("matmul200", p, 1, t, func() {
				var wg sync.WaitGroup
				wg.Add(parts)
				for i := 0; i < parts; i++ {
					go func(i int) {
						compute(n*n*i/parts, n*n*(i+1)/parts)
						wg.Done()
					}(i)
				}
				wg.Wait()
			})
		}
	}
}

func residentBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 && fields[0] == "VmRSS:" {
			kib, _ := strconv.ParseUint(fields[1], 10, 64)
			return kib * 1024
		}
	}
	return 0
}

// n goroutines blocked at once on a channel receive: resident bytes gained per goroutine.
func blockedMemory(n uint64) {
	runtime.GOMAXPROCS(1)
	runtime.GC()
	gate := make(chan struct{})
	var started atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(int(n))
	before := residentBytes()
	for i := uint64(0); i < n; i++ {
		go func() {
			started.Add(1)
			<-gate
			wg.Done()
		}()
	}
	for started.Load() < n {
		runtime.Gosched()
	}
	after := residentBytes()
	close(gate)
	wg.Wait()
	per := (float64(after) - float64(before)) / float64(n)
	result{"blocked_memory", "go", "bytes", 1, n, n, per, per, per, 1}.print()
}

func main() {
	quick := flag.Bool("quick", false, "reduced counts and repetitions")
	maxP := flag.Int("processors", runtime.NumCPU(), "curves run on 1..N processors")
	doubling := flag.Bool("doubling", false, "curves run on 1, 2, 4, ..., N processors instead")
	countList := flag.String("counts", "1,25,1000,40000", "Figure 3 thread counts (presto_bench --figure3-counts)")
	flag.Parse()
	if *quick {
		repetitions = 3
	}
	var counts []uint64
	for _, s := range strings.Split(*countList, ",") {
		t, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad -counts:", err)
			os.Exit(2)
		}
		counts = append(counts, t)
	}
	blockedMemory(scaled(*quick, 1_000_000, 20_000)) // first: a fresh heap
	yields(scaled(*quick, 20_000_000, 1_000_000))
	forkJoin(scaled(*quick, 2_000_000, 100_000))
	locks(1, scaled(*quick, 50_000_000, 2_000_000))
	if *maxP >= 2 {
		locks(2, scaled(*quick, 5_000_000, 500_000))
	}
	channelPingPong(1, scaled(*quick, 4_000_000, 200_000))
	if *maxP >= 2 {
		channelPingPong(2, scaled(*quick, 400_000, 20_000))
	}
	leaves := scaled(*quick, 1_000_000, 10_000)
	ps := curve(*maxP, *doubling)
	skynets(ps, leaves)
	for smaller := max(leaves/1000, 100); smaller < leaves; smaller *= 10 {
		skynets([]int{*maxP}, smaller)
	}
	matmul(ps, counts)
}
