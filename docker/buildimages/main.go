// Command buildimages builds redline's container images ahead of time
// (scripts/build-images): redline/redis from this host's redis-server and
// redline/reference from a static redline binary. Images already built with
// the same inputs are kept.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redline-dev/redline/docker"
)

func main() {
	targets := os.Args[1:]
	if len(targets) == 0 {
		targets = []string{"redis", "reference"}
	}
	rt, err := docker.New(docker.Options{Log: log.Printf})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, t := range targets {
		tag, id, err := rt.BuildImage(ctx, t)
		if err != nil {
			log.Fatalf("%s: %v", t, err)
		}
		fmt.Printf("%s\t%s\t%s\n", t, tag, id)
	}
}
