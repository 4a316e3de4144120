package dev.holdfast.shop.browser;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.CompletableFuture;

/**
 * Base of the browser tests that check both editions: the shop, a browser in Seoul with Korean
 * settings and one in UTC with English settings, open at once.
 */
@ExtendWith(ScreenshotOnFailure.class)
abstract class SeoulAndUtcBrowsers {

    static ShopServer shop;
    static Browser seoul;
    static Browser utc;

    @BeforeAll
    static void openBrowsers() {
        shop = ShopServer.get();
        CompletableFuture<Browser> s =
                CompletableFuture.supplyAsync(() -> new Browser("seoul-ko", shop, "Asia/Seoul", "ko-KR"));
        CompletableFuture<Browser> u = CompletableFuture.supplyAsync(() -> new Browser("utc-en", shop, "UTC", "en-US"));
        seoul = s.join();
        utc = u.join();
    }

    @AfterAll
    static void closeBrowsers() {
        try (Browser s = seoul;
                Browser u = utc) {
            seoul = null;
            utc = null;
        }
    }
}
