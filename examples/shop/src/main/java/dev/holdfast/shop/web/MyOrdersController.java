package dev.holdfast.shop.web;

import dev.holdfast.shop.order.Order;
import dev.holdfast.shop.order.OrderService;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.validation.Valid;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.validation.BindingResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.servlet.mvc.support.RedirectAttributes;

import java.security.Principal;

/** A customer's own orders and the "change shipping address" form. */
@Controller
@RequestMapping("/my/orders")
class MyOrdersController {

    private final OrderService orders;
    private final Texts texts;

    MyOrdersController(OrderService orders, Texts texts) {
        this.texts = texts;
        this.orders = orders;
    }

    @GetMapping
    String list(Principal user, Model model) {
        model.addAttribute("orders", orders.ordersOf(user.getName()));
        return "my-orders";
    }

    @GetMapping("/{orderNumber}")
    String shippingForm(@PathVariable String orderNumber, Principal user, Model model) {
        Order order = orders.ownOrder(user.getName(), FormInput.orderNumber(orderNumber));
        model.addAttribute("order", order);
        model.addAttribute("form", ShippingForm.of(order));
        return "my-order";
    }

    @PostMapping("/{orderNumber}/shipping")
    String changeShipping(
            @PathVariable String orderNumber,
            @Valid @ModelAttribute("form") ShippingForm form,
            BindingResult errors,
            Principal user,
            Model model,
            HttpServletResponse response,
            RedirectAttributes redirect) {
        String number = FormInput.orderNumber(orderNumber);
        long seenVersion = FormInput.version(form.getVersion());
        if (errors.hasErrors()) {
            // Show the form again with the version the user saw, not the current one: a fresh version
            // here would silently accept whatever changed in between.
            model.addAttribute("order", orders.ownOrder(user.getName(), number));
            response.setStatus(422);
            return "my-order";
        }
        orders.changeShippingInfo(user.getName(), number, seenVersion, form.toShippingInfo());
        Notices.success(redirect, texts.html("shipping.saved", number));
        return "redirect:/my/orders/" + number;
    }
}
