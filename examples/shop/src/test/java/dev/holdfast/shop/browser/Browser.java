package dev.holdfast.shop.browser;

import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriverException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.WindowType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * One headless Debian chromium session driven by the system chromedriver: no browser or driver download
 * (the driver and the binary are given explicitly, so Selenium Manager is not asked), a fresh profile
 * folder per session.
 */
final class Browser implements AutoCloseable {

    static final Path SCREENSHOTS = Path.of("target", "screenshots");
    private static final String CHROMIUM = System.getenv().getOrDefault("HOLDFAST_CHROMIUM", "/usr/bin/chromium");
    private static final String CHROMEDRIVER =
            System.getenv().getOrDefault("HOLDFAST_CHROMEDRIVER", "/usr/bin/chromedriver");

    /** Sessions open right now, for screenshots on failure. */
    static final Set<Browser> OPEN = ConcurrentHashMap.newKeySet();

    private final String role;
    private final Path profile;
    private final ChromeDriver driver;
    private final ShopServer shop;

    Browser(String role, ShopServer shop) {
        this(role, shop, null, null);
    }

    /**
     * A session in time zone {@code zone} (the chromedriver's and so chromium's {@code TZ}) whose language
     * is {@code language} (e.g. {@code ko-KR}: {@code --lang} and the {@code Accept-Language} preference);
     * null keeps the machine's.
     */
    Browser(String role, ShopServer shop, String zone, String language) {
        this.role = role;
        this.shop = shop;
        try {
            this.profile = Files.createTempDirectory("holdfast-chromium-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM);
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--no-first-run",
                "--window-size=1280,900",
                "--user-data-dir=" + profile,
                // a page left in a background tab keeps its timers (an edit page's heartbeat)
                "--disable-background-timer-throttling",
                "--disable-renderer-backgrounding",
                "--disable-backgrounding-occluded-windows");
        if (language != null) {
            options.addArguments("--lang=" + language);
            options.setExperimentalOption(
                    "prefs", java.util.Map.of("intl.accept_languages", language + "," + language.substring(0, 2)));
        }
        ChromeDriverService.Builder builder = new ChromeDriverService.Builder();
        if (zone != null) {
            builder.withEnvironment(java.util.Map.of("TZ", zone));
        }
        ChromeDriverService service = builder.usingDriverExecutable(new File(CHROMEDRIVER))
                .usingAnyFreePort()
                .build();
        this.driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
        OPEN.add(this);
    }

    String role() {
        return role;
    }

    void open(String path) {
        driver.get(shop.url(path));
    }

    /**
     * Opens a new tab and switches to it; the page left behind keeps running (an edit page keeps
     * extending its lock). Returns the handle of the tab left behind.
     */
    String openTab() {
        String left = driver.getWindowHandle();
        driver.switchTo().newWindow(WindowType.TAB);
        return left;
    }

    /** Switches to {@code tab} (a handle from {@link #openTab()}) without closing the current one; returns the current one's. */
    String switchTo(String tab) {
        String left = driver.getWindowHandle();
        driver.switchTo().window(tab);
        return left;
    }

    /** Closes the current tab and switches back to {@code tab}. */
    void closeTabAndReturnTo(String tab) {
        driver.close();
        driver.switchTo().window(tab);
    }

    /** Reloads the page (F5), and returns once the reloaded page has loaded. */
    void reload() {
        driver.navigate().refresh();
    }

    /**
     * Times of day the page shows as plain text, outside a {@code <time>} element: each with the text
     * around it (the edit page's heartbeat line included).
     */
    @SuppressWarnings("unchecked")
    java.util.List<String> plainTimes() {
        return (java.util.List<String>) script("""
                const found = [];
                const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
                for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                  const parent = node.parentElement;
                  if (/\\b\\d\\d:\\d\\d:\\d\\d\\b/.test(node.nodeValue) && !parent.closest('time')
                      && !parent.closest('script')) {
                    found.push(parent.textContent.trim());
                  }
                }
                return found;""");
    }

    /** The {@code title} (UTC hint) of every {@code <time>} element of the page, "" where there is none. */
    @SuppressWarnings("unchecked")
    java.util.List<String> timeTitles() {
        return (java.util.List<String>)
                script("return Array.from(document.querySelectorAll('time')).map(t => t.getAttribute('title') || '');");
    }

    /** Resizes the window (CSS pixels), e.g. to a phone's 390 px width. */
    void resize(int width, int height) {
        driver.manage().window().setSize(new org.openqa.selenium.Dimension(width, height));
        await(
                "a window " + width + " px wide",
                d -> ((Number) ((JavascriptExecutor) d).executeScript("return window.innerWidth;")).intValue()
                        == width);
    }

    /** Forgets the session (the shop's cookies). */
    void signOut() {
        driver.manage().deleteAllCookies();
    }

    /** Signs out whoever was signed in, then signs in {@code user}. */
    void signIn(String user, String password) {
        driver.manage().deleteAllCookies();
        open("/login");
        awaitZoneReported();
        driver.findElement(By.id("username")).sendKeys(user);
        driver.findElement(By.id("password")).sendKeys(password);
        click("sign-in");
        if (!user.equals(text("current-user"))) {
            throw new IllegalStateException("sign-in of " + user + " failed on " + driver.getCurrentUrl());
        }
    }

    /** Waits until the page's script has told the shop this browser's time zone (or found it known). */
    void awaitZoneReported() {
        new WebDriverWait(driver, Duration.ofSeconds(10))
                .until(d -> ((JavascriptExecutor) d)
                                .executeScript("return document.documentElement.getAttribute('data-zone-reported');")
                        != null);
    }

    /** The {@code data-page} of the page's main element: which page the shop rendered. */
    String page() {
        return driver.findElement(By.tagName("main")).getDomAttribute("data-page");
    }

    /** HTTP status of the document now shown (Navigation Timing); after a redirect, the final one. */
    long status() {
        Object status = ((JavascriptExecutor) driver)
                .executeScript("return performance.getEntriesByType('navigation')[0].responseStatus;");
        return ((Number) status).longValue();
    }

    /** An attribute of the page's main element, e.g. {@code data-code} of a lock problem page. */
    String mainAttribute(String name) {
        return driver.findElement(By.tagName("main")).getDomAttribute(name);
    }

    String text(String id) {
        return driver.findElement(By.id(id)).getText();
    }

    WebElement css(String selector) {
        return driver.findElement(By.cssSelector(selector));
    }

    java.util.List<WebElement> all(String selector) {
        return driver.findElements(By.cssSelector(selector));
    }

    WebElement element(String id) {
        return driver.findElement(By.id(id));
    }

    /** Clicks an element that loads a new page, and returns once that page has loaded. */
    void click(String id) {
        script("window.__holdfastOldPage = true;");
        driver.findElement(By.id(id)).click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .ignoring(WebDriverException.class)
                .until(
                        d -> Boolean.TRUE.equals(
                                ((JavascriptExecutor) d)
                                        .executeScript(
                                                "return window.__holdfastOldPage === undefined && document.readyState === 'complete';")));
    }

    /** Waits (up to 30 s) until {@code condition} holds on this browser's page, and returns its value. */
    <T> T await(String what, java.util.function.Function<org.openqa.selenium.WebDriver, T> condition) {
        return new WebDriverWait(driver, Duration.ofSeconds(30))
                .withMessage(what)
                .ignoring(WebDriverException.class)
                .until(condition);
    }

    /** Waits (up to 30 s) until the element {@code id} has {@code attribute} equal to {@code value}. */
    void awaitAttribute(String id, String attribute, String value) {
        await(
                id + " " + attribute + "=" + value,
                d -> value.equals(d.findElement(By.id(id)).getDomAttribute(attribute)));
    }

    void type(String id, String value) {
        WebElement input = driver.findElement(By.id(id));
        input.clear();
        input.sendKeys(value);
    }

    Object script(String js, Object... args) {
        return ((JavascriptExecutor) driver).executeScript(js, args);
    }

    /**
     * Runs {@code js} as an asynchronous script: it ends by calling its last argument with the result;
     * waits up to {@code timeout} for that.
     */
    Object asyncScript(Duration timeout, String js, Object... args) {
        driver.manage().timeouts().scriptTimeout(timeout);
        return ((JavascriptExecutor) driver).executeAsyncScript(js, args);
    }

    String currentUrl() {
        return driver.getCurrentUrl();
    }

    /** Saves a PNG of the page as {@code target/screenshots/name-role.png}. */
    Path screenshot(String name) {
        try {
            Files.createDirectories(SCREENSHOTS);
            File png = driver.getScreenshotAs(OutputType.FILE);
            String database = ShopServer.onPostgreSql() ? "-postgresql" : "";
            Path target = SCREENSHOTS.resolve(name + "-" + role + database + ".png");
            Files.copy(png.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        OPEN.remove(this);
        try {
            driver.quit();
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // a leftover temp profile is harmless
            }
        }
    }
}
