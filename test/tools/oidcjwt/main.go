// Command oidcjwt is the example OpenID provider of github.com/zitadel/oidc
// (its storage, login pages and routes, unchanged) with clients whose
// access tokens are JWTs. The example's own server registers only clients
// of opaque access tokens, with no setting to change it; the library
// issues JWT access tokens, signed with the provider's key and published
// in its JWKS, for a client whose AccessTokenType says so. JWT_CLIENTS
// names such clients (comma-separated ids), confidential ones of secret
// "secret", as the example's "web": its authorization requests name the
// client as the tokens' audience, so a test names a client after the
// resource its tokens are for. PORT, REDIRECT_URI and USERS_FILE are the
// example server's.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/zitadel/oidc/v3/example/server/config"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// jwtClient is a client whose access tokens are JWTs.
type jwtClient struct{ op.Client }

func (jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

// jwtStorage is the example's storage, its JWT clients told apart.
type jwtStorage struct {
	*storage.Storage
	jwt map[string]bool
}

func (s jwtStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err == nil && s.jwt[id] {
		c = jwtClient{c}
	}
	return c, err
}

func main() {
	cfg := config.FromEnvVars(&config.Config{Port: "9998"})
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	issuer := fmt.Sprintf("http://localhost:%s/", cfg.Port)
	clients := []*storage.Client{
		storage.NativeClient("native", cfg.RedirectURI...),
		storage.WebClient("web", "secret", cfg.RedirectURI...),
		storage.WebClient("api", "secret", cfg.RedirectURI...),
	}
	jwt := map[string]bool{}
	for id := range strings.SplitSeq(os.Getenv("JWT_CLIENTS"), ",") {
		if id != "" {
			jwt[id] = true
			clients = append(clients, storage.WebClient(id, "secret", cfg.RedirectURI...))
		}
	}
	storage.RegisterClients(clients...)
	users := storage.NewUserStore(issuer)
	if cfg.UsersFile != "" {
		var err error
		if users, err = storage.StoreFromFile(cfg.UsersFile); err != nil {
			log.Error("reading the users file", "err", err)
			os.Exit(1)
		}
	}
	router := exampleop.SetupServer(issuer, jwtStorage{Storage: storage.NewStorage(users), jwt: jwt}, log, false)
	srv := &http.Server{Addr: ":" + cfg.Port, Handler: router}
	log.Info("listening", "issuer", issuer, "jwtClients", os.Getenv("JWT_CLIENTS"))
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Error("serving", "err", err)
		os.Exit(1)
	}
}
