// The Go peer of benchmarks/echo: a TCP echo server with one goroutine per connection (Go's
// netpoller), the program a Go user would write. Prints "go-echo: listening on ADDRESS:PORT".
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
)

func serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 16*1024)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			return
		}
	}
}

func main() {
	port := flag.Int("port", 0, "TCP port (0: any free port)")
	procs := flag.Int("processors", runtime.NumCPU(), "GOMAXPROCS")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-echo:", err)
		os.Exit(1)
	}
	fmt.Printf("go-echo: listening on %s (%d processors)\n", l.Addr(), *procs)
	os.Stdout.Sync()
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "go-echo:", err)
			os.Exit(1)
		}
		go serve(c)
	}
}
