// Command ferretdb runs FerretDB (github.com/FerretDB/FerretDB, a MongoDB
// wire-protocol server on SQLite or PostgreSQL) for svc's MongoDB adapter
// tests (server/store/mongodb.test.ts), through FerretDB's own embeddable
// package: the same handler and listener as its cmd/ferretdb. cmd/ferretdb
// itself builds as a dependency but panics at start: it requires
// build/version/version.txt, a file FerretDB's release build generates and
// the module zip does not hold (see README.md beside go.mod).
//
// It listens on -listen (port 0: a free one), prints the server's URI
// (mongodb://host:port/) as its first line on stdout once it accepts
// connections, and stops on SIGINT or SIGTERM, or when stdin closes, so it
// never outlives the test process that started it.
//
// Built into test/peers/bin by scripts/peers.sh (nested module test/peers/ferretdb).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on (port 0: a free one)")
	handler := flag.String("handler", "sqlite", "backend: sqlite or postgresql")
	sqliteURL := flag.String("sqlite-url", "", "SQLite directory URI for -handler sqlite, e.g. file:/tmp/data/")
	postgresqlURL := flag.String("postgresql-url", "", "PostgreSQL URL for -handler postgresql")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error (logs go to stderr)")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: -log-level: %v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	server, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Logger:        logger,
		Handler:       *handler,
		SQLiteURL:     *sqliteURL,
		PostgreSQLURL: *postgresqlURL,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()

	// New has bound the listener already: the URI names the port it got.
	fmt.Println(server.MongoDBURI())
	if err := server.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}
}
