/*
Copyright 2026 The Switchboard Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command sandbox serves emulators of every upstream API on one port, so
// the manager and webhook can run end to end with no accounts and no
// network. It prints the --upstream flags that point at it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// seed is the sandbox's initial data, loadable from a JSON file so that the
// demo and people can register OAuth clients and grants without code.
type seed struct {
	GoogleOAuth struct {
		Clients map[string]string `json:"clients"` // client_id → client_secret
	} `json:"googleOAuth"`
	Notion struct {
		Clients map[string]string `json:"clients"` // client_id → client_secret
		// Workspace is granted on the consent page; Pages are shared with it.
		Workspace *struct{ ID, Name, BotID string } `json:"workspace"`
		Pages     []string                          `json:"pages"`
	} `json:"notion"`
	Discord struct {
		Clients map[string]string `json:"clients"` // client_id → client_secret
		// User is who the consent page authorizes as.
		User *struct{ ID, Username, GlobalName string } `json:"user"`
	} `json:"discord"`
	GoogleSheets struct {
		// Spreadsheets exist from the start, e.g. one with a header row for
		// the demo to append to.
		Spreadsheets []struct {
			ID       string              `json:"id"`
			TimeZone string              `json:"timeZone"`
			Sheets   []sandbox.SheetSpec `json:"sheets"`
		} `json:"spreadsheets"`
		// WriteQuota is the write requests per minute per user (0: Google's 60).
		WriteQuota int `json:"writeQuota"`
	} `json:"googleSheets"`
}

// options are the command's flags.
type options struct {
	addr          string
	seedFile      string
	maxChannelTTL time.Duration
}

// bind declares the flags on fs.
func (o *options) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "addr", "127.0.0.1:9090", "Address to listen on (keep it on loopback: the sandbox has no authentication).")
	fs.StringVar(&o.seedFile, "seed", "", "JSON file with initial data: {\"googleOAuth\":{\"clients\":{\"ID\":\"SECRET\"}}, \"googleSheets\":{\"spreadsheets\":[{\"id\":\"…\",\"timeZone\":\"…\",\"sheets\":[{\"id\":0,\"title\":\"Sheet1\",\"rows\":[[\"Date\",\"Hours\"]]}]}]}}.")
	fs.DurationVar(&o.maxChannelTTL, "calendar-max-channel-ttl", 7*24*time.Hour,
		"Longest life the Google Calendar emulator grants a push channel (Google: 7 days). A few seconds makes a CalendarWatch renew its channel within the demo.")
}

func main() {
	var opts options
	opts.bind(flag.CommandLine)
	flag.Parse()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if opts.maxChannelTTL <= 0 {
		log.Error("--calendar-max-channel-ttl must be positive", "value", opts.maxChannelTTL.String())
		os.Exit(1)
	}
	sd, err := readSeed(opts.seedFile)
	if err != nil {
		log.Error("cannot read seed file", "file", opts.seedFile, "err", err)
		os.Exit(1)
	}
	s, calendar := sd.sandbox(opts.maxChannelTTL)
	defer calendar.Close()

	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", opts.addr)
	if err != nil {
		log.Error("cannot listen", "addr", opts.addr, "err", err)
		os.Exit(1)
	}
	printHowToUse(s, "http://"+ln.Addr().String())
	if err := serve(s, ln); !errors.Is(err, http.ErrServerClosed) {
		log.Error("sandbox stopped", "err", err)
		os.Exit(1)
	}
}

// readSeed reads the seed file; no file is an empty seed.
func readSeed(file string) (seed, error) {
	var sd seed
	if file == "" {
		return sd, nil
	}
	b, err := os.ReadFile(file) //nolint:gosec // G304: the seed file the sandbox's own operator names with --seed
	if err == nil {
		err = json.Unmarshal(b, &sd)
	}
	return sd, err
}

// sandbox builds the sandbox of every emulator, seeded. It returns the
// Google Calendar emulator too, whose push sender is to be closed.
func (sd *seed) sandbox(maxChannelTTL time.Duration) (*sandbox.Server, *sandbox.GoogleCalendar) {
	google := sandbox.NewGoogleOAuth()
	for id, secret := range sd.GoogleOAuth.Clients {
		google.AddClient(id, secret)
	}
	// Google Calendar answers to access tokens of the Google OAuth emulator;
	// its controls are under /_sandbox/calendar/.
	calendar := sandbox.NewGoogleCalendar(google)
	calendar.MaxChannelTTL = maxChannelTTL
	// Every other emulator is served as it is built (sandbox.WithUnseeded).
	s := sandbox.New(sandbox.WithUnseeded(google, sd.notion(), sd.discord(), calendar, sd.sheets(google))...)
	return s, calendar
}

// notion is the Notion emulator with the seed's clients, consent workspace
// and pages.
func (sd *seed) notion() *sandbox.Notion {
	notion := sandbox.NewNotion()
	for id, secret := range sd.Notion.Clients {
		notion.AddClient(id, secret)
	}
	if w := sd.Notion.Workspace; w != nil {
		ws := sandbox.NotionWorkspace{ID: w.ID, Name: w.Name, BotID: w.BotID}
		notion.SetConsentWorkspace(ws)
		for _, title := range sd.Notion.Pages {
			notion.AddPage(ws.ID, title)
		}
	}
	return notion
}

// discord is the Discord emulator with the seed's clients and consent user.
func (sd *seed) discord() *sandbox.Discord {
	discord := sandbox.NewDiscord()
	for id, secret := range sd.Discord.Clients {
		discord.AddClient(id, secret)
	}
	if u := sd.Discord.User; u != nil {
		discord.SetConsentUser(sandbox.DiscordUser{ID: u.ID, Username: u.Username, GlobalName: u.GlobalName})
	}
	return discord
}

// sheets is the Google Sheets emulator with the seed's spreadsheets and
// write quota. It answers to the same tokens as Google Calendar; its
// controls are under /_sandbox/sheets/.
func (sd *seed) sheets(google *sandbox.GoogleOAuth) *sandbox.GoogleSheets {
	sheets := sandbox.NewGoogleSheets(google)
	for _, sp := range sd.GoogleSheets.Spreadsheets {
		sheets.AddSpreadsheet(sp.ID, sp.TimeZone, sp.Sheets...)
	}
	if sd.GoogleSheets.WriteQuota > 0 {
		sheets.SetWriteQuota(sd.GoogleSheets.WriteQuota)
	}
	return sheets
}

// printHowToUse prints where the sandbox listens and the --upstream flags
// that point Switchboard at it.
func printHowToUse(s *sandbox.Server, base string) {
	fmt.Println("sandbox listening on " + base)
	fmt.Println("point Switchboard at it with:")
	for _, f := range sandbox.UpstreamFlags(base) {
		fmt.Println("  --upstream " + f)
	}
	fmt.Println("routes: " + strings.Join(s.Routes(), ", "))
}

// serve serves s on ln until SIGINT or SIGTERM, then shuts down within 5 s.
func serve(s *sandbox.Server, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	return srv.Serve(ln)
}
