module github.com/aegis-sec/aegis-go

go 1.19
