// Package platformtest provides what platform tests share that belongs to
// no one platform: a Recorder, a core.Platform that records every write,
// file, notification and reaction. The fakes of each real platform live
// beside the adapter they fake (discordtest, slacktest, telegramtest).
package platformtest
