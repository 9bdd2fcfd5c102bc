module github.com/neardup/neardup

go 1.26.8
