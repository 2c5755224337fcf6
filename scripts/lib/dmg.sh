#!/usr/bin/env bash
# Puts a macOS app in a .dmg beside a link to /Applications (hdiutil's
# compressed image, UDZO), as the CI and release jobs ship it.
#
# GitHub's macOS runners sometimes answer "hdiutil: create failed - Resource
# busy" (a disk image the system still holds attached, which frees itself
# within seconds): the create is tried up to 5 times, pausing 5, 10, 15 and
# 20 s between tries (SWAPSIGHT_DMG_PAUSE sets the step, for the test).
#
# Usage: scripts/lib/dmg.sh APP DMG
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 APP DMG" >&2; exit 2; }
app=$1 dmg=$2
pause=${SWAPSIGHT_DMG_PAUSE:-5}
tries=5
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
mkdir -p "$(dirname "$dmg")"
for attempt in $(seq "$tries"); do
  if hdiutil create -volname swapsight -srcfolder "$stage" -ov -format UDZO "$dmg"; then
    exit 0
  fi
  [ "$attempt" = "$tries" ] && break
  echo "dmg.sh: hdiutil create failed (try $attempt of $tries); again in $((attempt * pause)) s" >&2
  sleep $((attempt * pause))
done
echo "dmg.sh: hdiutil create failed $tries times" >&2
exit 1
