module presto/benchmarks/peers/go

go 1.21
