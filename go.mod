module github.com/jake-bot/jake-bot

go 1.26.8

require (
	github.com/bwmarrin/discordgo v0.29.0
	github.com/caarlos0/env/v11 v11.4.2
	github.com/gorilla/websocket v1.5.3
	golang.org/x/time v0.16.0
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/crypto v0.0.0-20210421170649-83a5a9bb288b // indirect
	golang.org/x/sys v0.0.0-20201119102817-f84b799fce68 // indirect
)
