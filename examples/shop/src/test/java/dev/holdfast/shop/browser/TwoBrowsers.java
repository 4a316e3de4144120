package dev.holdfast.shop.browser;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.CompletableFuture;

/** Base of the browser tests: the shop, and two browser sessions open at once, one per role. */
@ExtendWith(ScreenshotOnFailure.class)
abstract class TwoBrowsers {

    static ShopServer shop;
    static Browser customer;
    static Browser admin;

    @BeforeAll
    static void openBrowsers() {
        shop = ShopServer.get();
        CompletableFuture<Browser> c = CompletableFuture.supplyAsync(() -> new Browser("customer", shop));
        CompletableFuture<Browser> a = CompletableFuture.supplyAsync(() -> new Browser("admin", shop));
        customer = c.join();
        admin = a.join();
    }

    @AfterAll
    static void closeBrowsers() {
        try (Browser c = customer;
                Browser a = admin) {
            customer = null;
            admin = null;
        }
    }
}
