package dev.holdfast.shop.web;

import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.shop.invoice.InvoiceService;
import dev.holdfast.shop.order.OrderService;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.servlet.mvc.support.RedirectAttributes;

import java.security.Principal;

/** The admin's order list, order detail and "start shipping". */
@Controller
@RequestMapping("/admin/orders")
class AdminOrdersController {

    private final OrderService orders;
    private final JdbcLockManager locks;
    private final InvoiceService invoices;
    private final Texts texts;

    AdminOrdersController(OrderService orders, JdbcLockManager locks, InvoiceService invoices, Texts texts) {
        this.texts = texts;
        this.orders = orders;
        this.locks = locks;
        this.invoices = invoices;
    }

    @GetMapping
    String list(Model model) {
        model.addAttribute("orders", orders.allOrders());
        return "admin-orders";
    }

    @GetMapping("/{orderNumber}")
    String detail(@PathVariable String orderNumber, Model model) {
        String number = FormInput.orderNumber(orderNumber);
        model.addAttribute("order", orders.anyOrder(number));
        model.addAttribute(
                "editLock", locks.holder(OrderService.EDIT_LOCK_TYPE, number).orElse(null));
        model.addAttribute("invoices", invoices.invoicesOf(number));
        return "admin-order";
    }

    @PostMapping("/{orderNumber}/start-shipping")
    String startShipping(
            @PathVariable String orderNumber,
            @RequestParam(required = false) String version,
            Principal admin,
            RedirectAttributes redirect) {
        String number = FormInput.orderNumber(orderNumber);
        long seenVersion = FormInput.version(version);
        orders.startShipping(admin.getName(), number, seenVersion);
        Notices.success(redirect, texts.html("admin-order.ship.started", number));
        return "redirect:/admin/orders/" + number;
    }
}
