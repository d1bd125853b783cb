// The main job (live captions of the bundled speech sample through the local reference server)
// needs the realtime client and the CLI (issues 4 and 5). Until they land, say so plainly.
console.error('soundclone: live captions are not built yet (issues 4 and 5). Try `npm run bench` for the encode path.');
process.exit(1);
