module presto/benchmarks/echo/go

go 1.21
