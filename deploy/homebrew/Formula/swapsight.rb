# Homebrew formula for the swapsight command line (record, report, guard, …):
# a template that deploy/homebrew/render fills in (@VERSION@, @REPO@, the
# tarballs' sums) for each release; .github/workflows/release.yml attaches the
# result as swapsight-formula.rb. Copy it to a tap as Formula/swapsight.rb.
class Swapsight < Formula
  desc "Footprint beside swap: record, report and guard runs that only look like they fit"
  homepage "https://github.com/@REPO@"
  version "@VERSION@"
  license any_of: ["MIT", "Apache-2.0"]

  on_macos do
    on_arm do
      url "https://github.com/@REPO@/releases/download/v#{version}/swapsight-#{version}-aarch64-apple-darwin.tar.gz"
      sha256 "@SHA256_CLI_AARCH64_APPLE_DARWIN@"
    end
    on_intel do
      url "https://github.com/@REPO@/releases/download/v#{version}/swapsight-#{version}-x86_64-apple-darwin.tar.gz"
      sha256 "@SHA256_CLI_X86_64_APPLE_DARWIN@"
    end
  end

  on_linux do
    on_arm do
      url "https://github.com/@REPO@/releases/download/v#{version}/swapsight-#{version}-aarch64-unknown-linux-gnu.tar.gz"
      sha256 "@SHA256_CLI_AARCH64_UNKNOWN_LINUX_GNU@"
    end
    on_intel do
      url "https://github.com/@REPO@/releases/download/v#{version}/swapsight-#{version}-x86_64-unknown-linux-gnu.tar.gz"
      sha256 "@SHA256_CLI_X86_64_UNKNOWN_LINUX_GNU@"
    end
  end

  def install
    bin.install "swapsight"
    doc.install "README.md", "docs"
  end

  test do
    assert_equal "swapsight #{version}", shell_output("#{bin}/swapsight --version").strip
  end
end
