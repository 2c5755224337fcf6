# Homebrew cask for the swapsight menu-bar app: a template that
# deploy/homebrew/render fills in (@VERSION@, @REPO@, the .dmg sums) for each
# release; .github/workflows/release.yml attaches the result as
# swapsight-cask.rb. Copy it to a tap as Casks/swapsight.rb.
cask "swapsight" do
  arch arm: "aarch64", intel: "x86_64"

  version "@VERSION@"
  sha256 arm:   "@SHA256_DMG_AARCH64@",
         intel: "@SHA256_DMG_X86_64@"

  url "https://github.com/@REPO@/releases/download/v#{version}/swapsight-#{version}-macos-#{arch}.dmg"
  name "swapsight"
  desc "Menu-bar memory monitor: footprint beside swap, flags the false fit"
  homepage "https://github.com/@REPO@"

  depends_on macos: ">= :big_sur"

  app "swapsight.app"

  zap trash: "~/Library/Application Support/dev.swapsight.monitor"

  caveats <<~EOS
    swapsight.app is ad-hoc signed, not notarized: the first time, open it
    with right-click → Open (or: xattr -dr com.apple.quarantine /Applications/swapsight.app).
  EOS
end
