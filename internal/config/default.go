package config

import "time"

// Defaults for what the file leaves out.
const (
	DefaultIdleTimeout        = 5 * time.Minute
	DefaultMaxTimeout         = time.Hour
	DefaultStartupTimeout     = 30 * time.Second
	DefaultProbeTimeout       = 3 * time.Second
	DefaultPrefix             = PrefixAlways
	DefaultSeparator          = "__"
	DefaultMaxMessageBytes    = 16 << 20
	DefaultDaemonIdleExit     = 30 * time.Minute
	DefaultMaxConcurrentCalls = 64               // per server
	DefaultQueueLength        = 256              // per server
	DefaultQueueTimeout       = 60 * time.Second // per queued call
	DefaultMaxCallsPerHost    = 256              // per host connection
	DefaultJobRetention       = 24 * time.Hour   // a finished job's result is kept this long
	DefaultTaskAfter          = time.Second      // a 2026-07-28 call still running this long becomes a task
	DefaultJobMaxResultBytes  = 4 << 20          // the largest result a job keeps
	// DefaultMaxConcurrentRequests is an HTTP server's limit of requests
	// in flight when its config sets none.
	DefaultMaxConcurrentRequests = 16
)

// Limits on settings.
const (
	minMessageBytes       = 1 << 10
	maxMessageBytes       = 1 << 30
	maxConcurrentCalls    = 1_000_000
	maxQueueLength        = 1_000_000
	maxCallsPerHost       = 1_000_000
	maxConcurrentRequests = 10_000
	maxSeparatorLen       = 4
)

// Default returns the config used when there is no config file: every
// default, and one stdio server "demo" that runs `executable demo` (the
// caller passes its own path, from os.Executable). Its File is "".
func Default(executable string) *Config {
	c := defaults()
	c.Servers["demo"] = &Server{
		Name:           "demo",
		Transport:      TransportStdio,
		Command:        executable,
		Args:           []string{"demo"},
		IdleTimeout:    c.IdleTimeout,
		MaxTimeout:     c.MaxTimeout,
		StartupTimeout: c.StartupTimeout,
		CallLimits:     c.callLimits(),
	}
	return c
}

// defaults returns a Config with every setting at its default and no servers.
func defaults() *Config {
	return &Config{
		Servers:            map[string]*Server{},
		IdleTimeout:        DefaultIdleTimeout,
		MaxTimeout:         DefaultMaxTimeout,
		StartupTimeout:     DefaultStartupTimeout,
		ProbeTimeout:       DefaultProbeTimeout,
		ToolNames:          ToolNames{Prefix: DefaultPrefix, Separator: DefaultSeparator},
		MaxMessageBytes:    DefaultMaxMessageBytes,
		DaemonIdleExit:     DefaultDaemonIdleExit,
		MaxConcurrentCalls: DefaultMaxConcurrentCalls,
		QueueLength:        DefaultQueueLength,
		QueueTimeout:       DefaultQueueTimeout,
		MaxCallsPerHost:    DefaultMaxCallsPerHost,
		Jobs:               Jobs{Retention: DefaultJobRetention, MaxResultBytes: DefaultJobMaxResultBytes, TaskAfter: DefaultTaskAfter},
	}
}
