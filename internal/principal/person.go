package principal

import "strings"

// PersonPrefix begins the ID of every person: "person:ISSUER#SUBJECT".
// An issuer identifier has no fragment, so the first "#" ends it.
const PersonPrefix = "person:"

// Person is someone signed in at an authorization server mcpx takes
// tokens of (mcpx.auth): the issuer and the subject (sub) it names them
// by make their ID, the same on every replica and for every token they
// hold, so that their jobs and tasks are theirs wherever they read them.
// name is their readable name, groups the groups the token says they
// are in, which select their policy.
func Person(issuer, subject, name string, groups []string) Principal {
	return Principal{id: PersonPrefix + issuer + "#" + subject, name: name, groups: strings.Join(groups, "\x00")}
}

// IsPerson reports whether p is a signed-in person.
func (p Principal) IsPerson() bool { return strings.HasPrefix(p.id, PersonPrefix) }

// Name is p's readable name: a person's name claim, a named token's
// name, else its ID. It is for people to read, never a key.
func (p Principal) Name() string {
	switch {
	case p.name != "":
		return p.name
	case p.token != "":
		return p.token
	}
	return p.String()
}

// Groups are the groups a person is in, as their token said; none for
// any other principal.
func (p Principal) Groups() []string {
	if p.groups == "" {
		return nil
	}
	return strings.Split(p.groups, "\x00")
}
